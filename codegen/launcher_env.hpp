/* The launcher's environment (docs/cli.md, "The launcher's environment"):
 * what every emitted launcher reads, once, at its first call.
 *
 *   AOTC_RECORD=FILE   each distinct shape seen and its call count, merged
 *                      into FILE (a record file `aotc tune --shapes` takes)
 *                      at most every AOT_RECORD_EVERY seconds and at exit;
 *                      FILE is a regular file or nothing is recorded
 *   AOTC_VARIANT=kernel=INDEX|NAME[,...]
 *                      run that variant instead of the dispatch's choice;
 *                      invalid for the shape, or a malformed item that may
 *                      name the kernel: the launch is refused
 *   AOTC_LOG=1         one line on stderr per launch: kernel, shape, variant
 *
 * aotc emit copies this text into each launcher; a translation unit that
 * includes several launchers (aotc link) compiles it once. With none of the
 * variables set a launch pays one predictable branch. C++11. */
#ifndef AOTC_LAUNCHER_ENV
#define AOTC_LAUNCHER_ENV 1

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define AOT_HAVE_FLOCK 1
#endif

/* What the launchers of one process share, whichever translation unit each
 * was compiled in: AOTC_VARIANT's items, the kernels launched, and the
 * messages printed, so that each is printed once per process. An inline
 * function's static is one object for the whole program (a shared library
 * that hides its symbols has its own); its type must therefore be the same
 * in every launcher that uses the name: change the struct, and the _1
 * becomes _2. */
struct aotc_launcher_env_shared_1 {
	struct item {
		std::string text;   /* as written, white space trimmed */
		std::string kernel; /* the kernel it names (well formed), or "" */
		std::string value;  /* what follows '=', trimmed */
		std::string error;  /* what is wrong with it, or "" */
		bool loose;         /* malformed so that it may mean any kernel named in it */
	};

	std::mutex mu;
	bool parsed;
	std::vector<item> items;
	std::set<std::string> launched, said;

	aotc_launcher_env_shared_1() : parsed(false) {}

	/* At exit: the items no launcher of this process could use. */
	~aotc_launcher_env_shared_1()
	{
		for (size_t i = 0; i < items.size(); i++) {
			const item &it = items[i];
			if (!it.error.empty() || launched.count(it.kernel) || known_but_for_case(it.kernel))
				continue;
			say("aotc: AOTC_VARIANT: '" + it.text + "' was not used: this process launched no kernel '" +
			    it.kernel + "'\n");
		}
	}

	bool known_but_for_case(const std::string &kernel) const
	{
		for (std::set<std::string>::const_iterator k = launched.begin(); k != launched.end(); ++k)
			if (same_but_for_case(*k, kernel))
				return true;
		return false;
	}

	static bool same_but_for_case(const std::string &a, const std::string &b)
	{
		if (a.size() != b.size())
			return false;
		for (size_t i = 0; i < a.size(); i++)
			if (std::tolower((unsigned char)a[i]) != std::tolower((unsigned char)b[i]))
				return false;
		return true;
	}

	/* Prints message unless this process printed it already. */
	void say(const std::string &message)
	{
		std::lock_guard<std::mutex> g(said_mu);
		if (said.insert(message).second)
			std::fputs(message.c_str(), stderr);
	}

private:
	std::mutex said_mu; /* apart from mu: say() is called with mu held */
};

inline aotc_launcher_env_shared_1 &aotc_launcher_env_shared_1_get()
{
	static aotc_launcher_env_shared_1 shared;
	return shared;
}

namespace {

typedef aotc_launcher_env_shared_1 aot_shared;

/* Seconds between two merges of the counts into the record file, at least;
 * a merge that took longer than a twentieth of that spaces them further, so
 * merging never takes more than 5% of the program's time. */
const int AOT_RECORD_EVERY = 2;
const int AOT_MERGE_SHARE = 20;
/* How long the merge at exit waits for another process's lock. */
const int AOT_LOCK_WAIT_MS = 2000;

/* Milliseconds of a monotonic clock, read at each recorded launch to see
 * whether a merge is due: the coarse clock where there is one, since the
 * precise one costs a launch some 25 ns on a virtual machine. */
inline int64_t aot_now_ms()
{
#ifdef CLOCK_MONOTONIC_COARSE
	struct timespec t;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &t) == 0)
		return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
#endif
	return std::chrono::duration_cast<std::chrono::milliseconds>(
	           std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* What a launcher tells its environment about its kernel: all of it
 * static data of the emitted files. */
struct aot_kernel_info {
	const char *kernel;                  /* "sgemm" */
	const char *tag;                     /* "cuda_sm90" */
	int nargs;                           /* shape arguments, in parameter order */
	const char *const *args;
	int (*num_variants)(void);
	const char *(*variant_name)(int);
	int (*valid_at)(int v, const int64_t *shape); /* the variant may run there */
};

/* ---- AOTC_VARIANT -------------------------------------------------------- */

inline std::string aot_trim(const std::string &s)
{
	size_t b = 0, e = s.size();
	while (b < e && std::isspace((unsigned char)s[b]))
		b++;
	while (e > b && std::isspace((unsigned char)s[e - 1]))
		e--;
	return s.substr(b, e - b);
}

inline bool aot_identifier(const std::string &s)
{
	if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < s.size(); i++)
		if (!(std::isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* Whether kernel occurs in text as a whole word, in any case: what a
 * malformed item may have meant. */
inline bool aot_names_word(const std::string &text, const std::string &kernel)
{
	size_t i = 0;
	while (i < text.size()) {
		if (!(std::isalnum((unsigned char)text[i]) || text[i] == '_')) {
			i++;
			continue;
		}
		size_t start = i;
		while (i < text.size() && (std::isalnum((unsigned char)text[i]) || text[i] == '_'))
			i++;
		if (aot_shared::same_but_for_case(text.substr(start, i - start), kernel))
			return true;
	}
	return false;
}

/* One kernel=VALUE item, whose brackets were checked by the caller. */
inline void aot_variant_item(aot_shared::item &it)
{
	size_t eq = it.text.find('=');
	if (it.text.empty()) {
		it.error = "an empty item (a comma too many?)";
		return;
	}
	if (eq == std::string::npos) {
		it.error = "no '=': each item is kernel=INDEX or kernel=NAME";
		it.loose = true;
		return;
	}
	std::string kernel = aot_trim(it.text.substr(0, eq));
	it.value = aot_trim(it.text.substr(eq + 1));
	if (!aot_identifier(kernel)) {
		it.error = "'" + kernel + "' is not a kernel name";
		it.loose = true;
		return;
	}
	it.kernel = kernel;
	if (it.value.empty()) {
		it.error = "no variant after '='";
	} else if (std::isdigit((unsigned char)it.value[0]) || it.value[0] == '-' || it.value[0] == '+') {
		/* a variant's name begins as an identifier: this is meant as an index */
		if (it.value.find_first_not_of("0123456789") != std::string::npos)
			it.error = "'" + it.value + "' is not an index (digits only)";
	}
}

/* AOTC_VARIANT split at the commas outside <>, () and [] (variant names
 * hold commas within them). A bracket left open swallows the rest of the
 * value, whose kernels it may all mean. */
inline std::vector<aot_shared::item> aot_parse_variant(const std::string &s)
{
	static const char open[] = "<([", close[] = ">)]";
	std::vector<aot_shared::item> items;
	std::string nesting, error;
	size_t start = 0;
	for (size_t i = 0; i <= s.size(); i++) {
		bool end = i == s.size();
		char c = end ? ',' : s[i];
		if (std::strchr(open, c)) {
			nesting += c;
			continue;
		}
		if (const char *cl = std::strchr(close, c)) {
			char o = open[cl - close];
			if (!nesting.empty() && nesting[nesting.size() - 1] == o)
				nesting.erase(nesting.size() - 1);
			else if (error.empty())
				error = std::string("'") + c + "' without its '" + o + "'";
			continue;
		}
		if (c != ',' || (!nesting.empty() && !end))
			continue;
		if (!nesting.empty() && error.empty()) {
			char o = nesting[nesting.size() - 1];
			error = std::string("'") + o + "' without its '" + close[std::strchr(open, o) - open] + "'";
		}
		aot_shared::item it;
		it.text = aot_trim(s.substr(start, i - start));
		it.loose = false;
		if (error.empty()) {
			aot_variant_item(it);
		} else {
			it.error = error;
			it.loose = true;
		}
		items.push_back(it);
		start = i + 1;
		nesting.clear();
		error.clear();
	}
	return items;
}

/* ---- The record file ------------------------------------------------------- */

/* One row: the shape as name/value pairs, and its calls. */
struct aot_row {
	std::vector<std::pair<std::string, long long> > shape;
	unsigned long long calls;
};

typedef std::map<std::string, std::vector<aot_row> > aot_record; /* kernel -> rows */

/* A reader for the JSON the writer below produces, whatever its layout:
 *   {"aotc_record": 1, "kernels": {"K": [{"shape": {"M": 1, ...}, "calls": 3}, ...], ...}}
 * Names are letters, digits and '_'; numbers are integers. Anything else
 * means the file is not a record file, and it is left alone. */
class aot_reader {
public:
	explicit aot_reader(const std::string &text) : s_(text), i_(0) {}

	bool read(aot_record &out)
	{
		bool version = false;
		if (!take('{'))
			return false;
		if (take('}'))
			return false;
		do {
			std::string key;
			if (!name(key) || !take(':'))
				return false;
			if (key == "aotc_record") {
				long long v;
				if (!integer(v) || v != 1)
					return false;
				version = true;
			} else if (key == "kernels") {
				if (!kernels(out))
					return false;
			} else {
				return false;
			}
		} while (take(','));
		if (!take('}') || !version)
			return false;
		space();
		return i_ == s_.size();
	}

private:
	const std::string &s_;
	size_t i_;

	void space()
	{
		while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
			i_++;
	}
	bool take(char c)
	{
		space();
		if (i_ < s_.size() && s_[i_] == c) {
			i_++;
			return true;
		}
		return false;
	}
	bool name(std::string &out)
	{
		if (!take('"'))
			return false;
		size_t start = i_;
		while (i_ < s_.size() && (std::isalnum((unsigned char)s_[i_]) || s_[i_] == '_'))
			i_++;
		if (i_ == start || i_ >= s_.size() || s_[i_] != '"')
			return false;
		out.assign(s_, start, i_ - start);
		i_++;
		return true;
	}
	bool integer(long long &out)
	{
		space();
		size_t start = i_;
		if (i_ < s_.size() && s_[i_] == '-')
			i_++;
		while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
			i_++;
		if (i_ == start || (i_ == start + 1 && s_[start] == '-'))
			return false;
		errno = 0;
		out = std::strtoll(s_.c_str() + start, NULL, 10);
		return errno == 0;
	}
	bool row(aot_row &r)
	{
		bool have_shape = false, have_calls = false;
		if (!take('{'))
			return false;
		do {
			std::string key;
			if (!name(key) || !take(':'))
				return false;
			if (key == "shape" && !have_shape) {
				if (!take('{'))
					return false;
				if (!take('}')) {
					do {
						std::pair<std::string, long long> kv;
						if (!name(kv.first) || !take(':') || !integer(kv.second))
							return false;
						r.shape.push_back(kv);
					} while (take(','));
					if (!take('}'))
						return false;
				}
				have_shape = true;
			} else if (key == "calls" && !have_calls) {
				long long c;
				if (!integer(c) || c < 0)
					return false;
				r.calls = (unsigned long long)c;
				have_calls = true;
			} else {
				return false;
			}
		} while (take(','));
		return take('}') && have_shape && have_calls;
	}
	bool kernels(aot_record &out)
	{
		if (!take('{'))
			return false;
		if (take('}'))
			return true;
		do {
			std::string k;
			if (!name(k) || !take(':') || !take('['))
				return false;
			std::vector<aot_row> &rows = out[k];
			if (!take(']')) {
				do {
					aot_row r;
					if (!row(r))
						return false;
					rows.push_back(r);
				} while (take(','));
				if (!take(']'))
					return false;
			}
		} while (take(','));
		return take('}');
	}
};

/* Most calls first, then by shape: the file reads hottest first and its
 * bytes depend only on its counts. */
inline bool aot_row_before(const aot_row &a, const aot_row &b)
{
	if (a.calls != b.calls)
		return a.calls > b.calls;
	/* a.shape < b.shape, comparing each name once */
	for (size_t i = 0; i < a.shape.size() && i < b.shape.size(); i++) {
		int c = a.shape[i].first.compare(b.shape[i].first);
		if (c != 0)
			return c < 0;
		if (a.shape[i].second != b.shape[i].second)
			return a.shape[i].second < b.shape[i].second;
	}
	return a.shape.size() < b.shape.size();
}

inline std::string aot_write_record(aot_record &rec)
{
	std::string t = "{\n  \"aotc_record\": 1,\n  \"kernels\": {";
	bool first_kernel = true;
	for (aot_record::iterator k = rec.begin(); k != rec.end(); ++k) {
		std::sort(k->second.begin(), k->second.end(), aot_row_before);
		t += first_kernel ? "\n    \"" : ",\n    \"";
		first_kernel = false;
		t += k->first + "\": [";
		for (size_t r = 0; r < k->second.size(); r++) {
			const aot_row &row = k->second[r];
			t += r ? ",\n      {\"shape\": {" : "\n      {\"shape\": {";
			for (size_t a = 0; a < row.shape.size(); a++) {
				char num[32];
				std::snprintf(num, sizeof num, "%lld", row.shape[a].second);
				t += (a ? ", \"" : "\"") + row.shape[a].first + "\": " + num;
			}
			char calls[48];
			std::snprintf(calls, sizeof calls, "}, \"calls\": %llu}", row.calls);
			t += calls;
		}
		t += k->second.empty() ? "]" : "\n    ]";
	}
	t += first_kernel ? "}\n}\n" : "\n  }\n}\n";
	return t;
}

struct aot_shape_hash {
	size_t operator()(const std::vector<int64_t> &s) const
	{
		uint64_t h = 0x9e3779b97f4a7c15ull;
		for (size_t i = 0; i < s.size(); i++)
			h = (h ^ (uint64_t)s[i]) * 0x100000001b3ull + (h >> 29);
		return (size_t)h;
	}
};

/* shape -> calls */
typedef std::unordered_map<std::vector<int64_t>, unsigned long long, aot_shape_hash> aot_counts;
/* shape -> its row */
typedef std::unordered_map<std::vector<int64_t>, size_t, aot_shape_hash> aot_rows_at;

/* Adds counts to kernel's rows of rec: one hash lookup per shape. Rows
 * whose argument names differ (another version of the kernel) are kept. */
inline void aot_merge(aot_record &rec, const aot_kernel_info *k, const aot_counts &counts)
{
	std::vector<aot_row> &rows = rec[k->kernel];
	aot_rows_at at(rows.size() + counts.size());
	for (size_t r = 0; r < rows.size(); r++) {
		const std::vector<std::pair<std::string, long long> > &s = rows[r].shape;
		bool ours = (int)s.size() == k->nargs;
		std::vector<int64_t> key;
		for (int a = 0; ours && a < k->nargs; a++) {
			ours = s[a].first == k->args[a];
			key.push_back(s[a].second);
		}
		if (ours)
			at.insert(std::make_pair(key, r));
	}
	for (aot_counts::const_iterator c = counts.begin(); c != counts.end(); ++c) {
		aot_rows_at::iterator i = at.find(c->first);
		if (i != at.end()) {
			rows[i->second].calls += c->second;
			continue;
		}
		aot_row row;
		for (int a = 0; a < k->nargs; a++)
			row.shape.push_back(std::make_pair(std::string(k->args[a]), (long long)c->first[a]));
		row.calls = c->second;
		at.insert(std::make_pair(c->first, rows.size()));
		rows.push_back(row);
	}
}

/* What a merge came to. */
enum aot_merge_result {
	AOT_MERGED,
	AOT_LATER,   /* not now (the lock is held, an error): the counts wait for the next merge */
	AOT_REFUSED, /* FILE is no place for a record: nothing more is recorded */
};

/* AOTC_RECORD's FILE: where it leads, and the merge of counts into it.
 * Nothing here can block on what FILE names: it is examined before it is
 * opened, opened without blocking and examined again, and the lock is
 * waited for a bounded time. */
class aot_record_file {
public:
	explicit aot_record_file(const std::string &path) : path_(path) {}

#ifdef AOT_HAVE_FLOCK
	/* The regular file FILE is, or leads to through symbolic links, or the
	 * file to create there: true and target set; false with why set
	 * (refused: a device, a FIFO, a directory...; or an error). */
	bool resolve(std::string &target, std::string &why, bool &refused) const
	{
		refused = false;
		struct stat st;
		if (stat(path_.c_str(), &st) == 0) {
			if (!S_ISREG(st.st_mode)) {
				why = path_ + " is " + kind(st.st_mode) + ", not a regular file";
				refused = true;
				return false;
			}
		} else if (errno != ENOENT) {
			why = "cannot examine " + path_ + ": " + std::strerror(errno);
			return false;
		}
		/* Follow the links to the last one's target, which a rename then
		 * replaces (the links stay), or creates when it does not exist. */
		target = path_;
		for (int hops = 0;; hops++) {
			if (lstat(target.c_str(), &st) != 0) {
				if (errno == ENOENT)
					return true;
				why = "cannot examine " + target + ": " + std::strerror(errno);
				return false;
			}
			if (!S_ISLNK(st.st_mode))
				break;
			char buf[4096];
			ssize_t n = hops < 40 ? readlink(target.c_str(), buf, sizeof buf) : -1;
			if (n < 0 || n == (ssize_t)sizeof buf) {
				why = "cannot follow the symbolic link " + target;
				return false;
			}
			std::string to(buf, (size_t)n);
			size_t slash = target.rfind('/');
			target = (!to.empty() && to[0] == '/') || slash == std::string::npos ? to : target.substr(0, slash + 1) + to;
		}
		if (!S_ISREG(st.st_mode)) {
			why = path_ + " leads to " + target + ", " + kind(st.st_mode) + ", not a regular file";
			refused = true;
			return false;
		}
		/* /dev/stdout when it is a file: replacing it would lose the output */
		static const char *const stream[] = {"input", "output", "error"};
		for (int fd = 0; fd < 3; fd++) {
			struct stat sf;
			if (fstat(fd, &sf) == 0 && sf.st_dev == st.st_dev && sf.st_ino == st.st_ino) {
				why = path_ + " is this program's standard " + stream[fd];
				refused = true;
				return false;
			}
		}
		return true;
	}

	/* Adds counts to the file under an exclusive lock on TARGET.lock
	 * (processes at once): read, add, write a temporary, rename. The lock
	 * is tried once, or waited for AOT_LOCK_WAIT_MS when wait. */
	aot_merge_result merge(const aot_kernel_info *k, const aot_counts &counts, bool wait, std::string &why)
	{
		std::string target;
		bool refused;
		if (!resolve(target, why, refused))
			return refused ? AOT_REFUSED : AOT_LATER;
		std::string lock_path = target + ".lock";
		int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (lock < 0) {
			why = "cannot open the lock " + lock_path + ": " + std::strerror(errno);
			return AOT_LATER;
		}
		aot_merge_result r = AOT_LATER;
		struct stat st;
		if (fstat(lock, &st) != 0 || !S_ISREG(st.st_mode)) {
			why = lock_path + " is not a regular file";
			r = AOT_REFUSED;
		} else if (!take_lock(lock, wait)) {
			if (wait) {
				char ms[16];
				std::snprintf(ms, sizeof ms, "%d", AOT_LOCK_WAIT_MS);
				why = lock_path + " stayed locked by another process for " + ms +
				      " ms; this process's counts are not written";
			}
		} else {
			r = locked_merge(k, counts, target, why);
		}
		close(lock); /* and unlocked */
		return r;
	}

private:
	static const char *kind(mode_t m)
	{
		return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
		       : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "something else";
	}

	static bool take_lock(int fd, bool wait)
	{
		for (int waited = 0;; waited += 10) {
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				return true;
			if (errno == EINTR)
				continue;
			if (errno != EWOULDBLOCK || !wait || waited >= AOT_LOCK_WAIT_MS)
				return false;
			struct timespec ten_ms = {0, 10 * 1000 * 1000};
			nanosleep(&ten_ms, NULL);
		}
	}

	aot_merge_result locked_merge(const aot_kernel_info *k, const aot_counts &counts, const std::string &target,
	                              std::string &why)
	{
		std::string text;
		struct stat st;
		bool exists = false;
		int fd = open(target.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			exists = true;
			if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
				close(fd);
				why = target + " is not a regular file";
				return AOT_REFUSED;
			}
			char buf[65536];
			ssize_t n;
			while ((n = read(fd, buf, sizeof buf)) != 0) {
				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0) {
					why = "cannot read " + target + ": " + std::strerror(errno);
					close(fd);
					return AOT_LATER;
				}
				text.append(buf, (size_t)n);
				size_t first = text.find_first_not_of(" \t\r\n");
				if (first != std::string::npos && text[first] != '{')
					break; /* not JSON: no need to read a big file to the end */
			}
			close(fd);
		} else if (errno != ENOENT) {
			int e = errno;
			why = "cannot read " + target + ": " + std::strerror(e);
			return e == ELOOP ? AOT_REFUSED : AOT_LATER; /* a link since resolve() */
		}
		aot_record rec;
		if (text.find_first_not_of(" \t\r\n") != std::string::npos && !aot_reader(text).read(rec)) {
			why = target + " is not a record file aotc wrote; it is left as it is";
			return AOT_REFUSED;
		}
		aot_merge(rec, k, counts);
		text = aot_write_record(rec);
		char pid[32];
		std::snprintf(pid, sizeof pid, ".tmp%ld", (long)getpid());
		std::string tmp = target + pid;
		unlink(tmp.c_str()); /* one a killed process with our pid left */
		fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0) {
			why = "cannot write " + tmp + ": " + std::strerror(errno);
			return AOT_LATER;
		}
		if (exists)
			(void)fchmod(fd, st.st_mode & 07777); /* the file keeps its permissions */
		bool ok = true;
		for (size_t done = 0; ok && done < text.size();) {
			ssize_t n = write(fd, text.data() + done, text.size() - done);
			if (n < 0 && errno == EINTR)
				continue;
			ok = n > 0;
			done += ok ? (size_t)n : 0;
		}
		ok &= close(fd) == 0;
		if (!ok || rename(tmp.c_str(), target.c_str()) != 0) {
			why = "cannot write " + target + ": " + std::strerror(errno);
			unlink(tmp.c_str());
			return AOT_LATER;
		}
		return AOT_MERGED;
	}
#else
public:
	/* Without POSIX: FILE as it is, no lock (processes at once may lose
	 * counts), no check of what it is. */
	bool resolve(std::string &target, std::string &, bool &refused) const
	{
		target = path_;
		refused = false;
		return true;
	}

	aot_merge_result merge(const aot_kernel_info *k, const aot_counts &counts, bool, std::string &why)
	{
		std::string text;
		std::FILE *f = std::fopen(path_.c_str(), "rb");
		if (f) {
			char buf[65536];
			size_t n;
			while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
				text.append(buf, n);
			std::fclose(f);
		}
		aot_record rec;
		if (text.find_first_not_of(" \t\r\n") != std::string::npos && !aot_reader(text).read(rec)) {
			why = path_ + " is not a record file aotc wrote; it is left as it is";
			return AOT_REFUSED;
		}
		aot_merge(rec, k, counts);
		text = aot_write_record(rec);
		std::string tmp = path_ + ".tmp";
		f = std::fopen(tmp.c_str(), "wb");
		bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
		ok &= f && std::fclose(f) == 0;
		if (ok && std::rename(tmp.c_str(), path_.c_str()) != 0) {
			std::remove(path_.c_str()); /* where rename does not replace */
			ok = std::rename(tmp.c_str(), path_.c_str()) == 0;
		}
		if (!ok) {
			why = "cannot write " + path_ + ": " + std::strerror(errno);
			std::remove(tmp.c_str());
		}
		return ok ? AOT_MERGED : AOT_LATER;
	}
#endif

private:
	std::string path_;
};

/* ---- One kernel's environment ------------------------------------------- */

class aot_env {
public:
	explicit aot_env(const aot_kernel_info *k)
	    : k_(k), shared_(aotc_launcher_env_shared_1_get()), file_(""), record_(false), log_(false),
	      forced_(-1), last_(NULL), merging_(false), due_(aot_now_ms() + AOT_RECORD_EVERY * 1000)
	{
		const char *r = std::getenv("AOTC_RECORD");
		if (r && *r) {
			file_ = aot_record_file(r);
			std::string target, why;
			bool refused;
			record_ = file_.resolve(target, why, refused) || !refused;
			if (refused)
				shared_.say("aotc: AOTC_RECORD: " + why + "; nothing is recorded\n");
		}
		const char *l = std::getenv("AOTC_LOG");
		log_ = l && *l && std::strcmp(l, "0") != 0;
		const char *v = std::getenv("AOTC_VARIANT");
		std::lock_guard<std::mutex> g(shared_.mu);
		shared_.launched.insert(k_->kernel);
		if (!v || !*v)
			return;
		if (!shared_.parsed) {
			shared_.items = aot_parse_variant(v);
			shared_.parsed = true;
			for (size_t i = 0; i < shared_.items.size(); i++)
				say_malformed(shared_.items[i], v);
		}
		choose(shared_.items);
	}

	~aot_env()
	{
		if (!record_)
			return;
		aot_counts counts;
		{
			std::lock_guard<std::mutex> g(mu_);
			counts.swap(counts_);
			last_ = NULL;
		}
		merge(counts, true);
	}

	bool active() const { return record_.load(std::memory_order_relaxed) || log_ || forced_ != -1; }

	/* The variant to launch for shape given the dispatch's choice v (-1:
	 * none valid), or -1 when the launch must be refused. */
	int observe(const int64_t *shape, int v)
	{
		if (record_.load(std::memory_order_relaxed))
			count(shape);
		bool forced = forced_ >= 0;
		int run = forced_ == -2 ? -1 : forced ? (k_->valid_at(forced_, shape) ? forced_ : -1) : v;
		if (log_)
			log(shape, v, run, forced);
		return run;
	}

private:
	const aot_kernel_info *k_;
	aot_shared &shared_;
	aot_record_file file_;
	std::atomic<bool> record_; /* false once FILE is refused */
	bool log_;
	int forced_;               /* -1: the dispatch; -2: every launch refused (why in refused_) */
	std::string refused_;
	std::mutex mu_;            /* what every launch takes: the counts, not the file */
	aot_counts counts_;        /* since the last merge */
	std::vector<int64_t> key_; /* the shape counted last */
	unsigned long long *last_; /* its count in counts_, or NULL */
	bool merging_;
	int64_t due_;              /* aot_now_ms() of the next merge */

	static void add(aot_counts &to, const aot_counts &from)
	{
		for (aot_counts::const_iterator i = from.begin(); i != from.end(); ++i)
			to[i->first] += i->second;
	}

	void say_malformed(const aot_shared::item &it, const char *value)
	{
		if (it.error.empty())
			return;
		std::string m = "aotc: AOTC_VARIANT";
		m += it.text.empty() ? "='" + std::string(value) + "': " : ": '" + it.text + "': ";
		m += it.error;
		if (!it.kernel.empty())
			m += "; every launch of " + it.kernel + " is refused\n";
		else if (it.loose && it.text.find_first_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos)
			m += "; every launch of a kernel named in it is refused\n";
		else
			m += "; it names no kernel\n";
		shared_.say(m);
	}

	/* Which items are this kernel's, and what they force. */
	void choose(const std::vector<aot_shared::item> &items)
	{
		const std::string me = k_->kernel;
		const aot_shared::item *by = NULL;
		for (size_t i = 0; i < items.size(); i++) {
			const aot_shared::item &it = items[i];
			if (!it.error.empty()) {
				if (it.loose ? aot_names_word(it.text, me) : aot_shared::same_but_for_case(it.kernel, me))
					refuse("AOTC_VARIANT is malformed");
				continue;
			}
			if (it.kernel != me) {
				if (aot_shared::same_but_for_case(it.kernel, me)) {
					shared_.say("aotc: AOTC_VARIANT: '" + it.text + "' names kernel '" + it.kernel + "', not " +
					            me + " (kernel names are case-sensitive); every launch of " + me + " is refused\n");
					refuse("AOTC_VARIANT is malformed");
				}
				continue;
			}
			int v = find(it.value);
			if (v < 0) {
				refuse("AOTC_VARIANT names no variant");
			} else if (by && forced_ >= 0 && v != forced_) {
				shared_.say("aotc: AOTC_VARIANT: '" + by->text + "' and '" + it.text + "' force different variants of " +
				            me + "; every launch of " + me + " is refused\n");
				refuse("AOTC_VARIANT forces two variants");
			} else if (forced_ == -1) {
				forced_ = v;
			}
			by = &it;
		}
	}

	void refuse(const char *why)
	{
		if (forced_ != -2)
			refused_ = why;
		forced_ = -2;
	}

	static bool same_name(const char *a, const char *b)
	{
		for (;;) {
			while (std::isspace((unsigned char)*a))
				a++;
			while (std::isspace((unsigned char)*b))
				b++;
			if (*a != *b)
				return false;
			if (!*a)
				return true;
			a++, b++;
		}
	}

	/* The variant an item's value names, exactly (white space aside), or
	 * -1 after saying which there are. */
	int find(const std::string &want)
	{
		int n = k_->num_variants();
		if (std::isdigit((unsigned char)want[0])) {
			errno = 0;
			long i = std::strtol(want.c_str(), NULL, 10);
			if (errno == 0 && i >= 0 && i < n)
				return (int)i;
		} else {
			for (int i = 0; i < n; i++)
				if (same_name(k_->variant_name(i), want.c_str()))
					return i;
		}
		std::string list;
		for (int i = 0; i < n; i++) {
			char num[16];
			std::snprintf(num, sizeof num, "%s%d ", i ? ", " : "", i);
			list += num;
			list += k_->variant_name(i);
		}
		shared_.say(std::string("aotc: AOTC_VARIANT: ") + k_->kernel + " (" + k_->tag + ") has no variant '" + want +
		            "'; its variants: " + list + "; every launch is refused\n");
		return -1;
	}

	void log(const int64_t *shape, int chose, int run, bool forced)
	{
		std::string line = "aotc: ";
		line += k_->kernel;
		line += " ";
		line += k_->tag;
		for (int a = 0; a < k_->nargs; a++) {
			char num[48];
			std::snprintf(num, sizeof num, "=%lld", (long long)shape[a]);
			line += " ";
			line += k_->args[a];
			line += num;
		}
		char num[32];
		if (run >= 0) {
			std::snprintf(num, sizeof num, " -> %d ", run);
			line += num;
			line += k_->variant_name(run);
			if (forced)
				line += chose == run ? " (AOTC_VARIANT, the dispatch's choice too)" : " (AOTC_VARIANT)";
		} else if (forced_ >= 0) {
			std::snprintf(num, sizeof num, " -> %d ", forced_);
			line += num;
			line += k_->variant_name(forced_);
			line += " (AOTC_VARIANT) is not valid for this shape: not launched";
		} else if (forced_ == -2) {
			line += " -> refused (" + refused_ + ")";
		} else {
			line += " -> no valid variant: not launched";
		}
		line += "\n";
		std::fputs(line.c_str(), stderr);
	}

	/* Counts under mu_; the launch that finds a merge due takes the counts
	 * and merges them after letting go of mu_, so that the other threads'
	 * launches never wait for the file. */
	void count(const int64_t *shape)
	{
		std::unique_lock<std::mutex> g(mu_);
		/* a program often launches one shape many times in a row */
		if (!last_ || !std::equal(shape, shape + k_->nargs, key_.begin())) {
			key_.assign(shape, shape + k_->nargs);
			last_ = &counts_[key_];
		}
		++*last_;
		if (merging_)
			return;
		int64_t now = aot_now_ms();
		if (now < due_)
			return;
		merging_ = true;
		aot_counts counts;
		counts.swap(counts_);
		last_ = NULL;
		g.unlock();
		bool merged = merge(counts, false);
		int64_t end = aot_now_ms();
		g.lock();
		if (!merged)
			add(counts_, counts);
		merging_ = false;
		due_ = end + std::max<int64_t>(AOT_RECORD_EVERY * 1000, (end - now) * AOT_MERGE_SHARE);
	}

	/* False when the counts are to be merged later (put them back). */
	bool merge(const aot_counts &counts, bool at_exit)
	{
		if (counts.empty())
			return true;
		std::string why;
		aot_merge_result r = file_.merge(k_, counts, at_exit, why);
		if (r == AOT_REFUSED) {
			record_ = false;
			shared_.say("aotc: AOTC_RECORD: " + why + "; nothing is recorded\n");
			return true;
		}
		if (r == AOT_LATER && !why.empty())
			shared_.say("aotc: AOTC_RECORD: " + why + "\n");
		return r == AOT_MERGED;
	}
};

} /* namespace */

#endif
