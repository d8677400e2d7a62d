/* The launcher's environment (docs/cli.md, "The launcher's environment"):
 * what every emitted launcher reads, once, at its first call.
 *
 *   AOTC_RECORD=FILE   each distinct shape seen and its call count, merged
 *                      into FILE (a record file `aotc tune --shapes` takes)
 *                      at most every AOT_RECORD_EVERY seconds and at exit
 *   AOTC_VARIANT=kernel=INDEX|NAME[,...]
 *                      run that variant instead of the dispatch's choice;
 *                      invalid for the shape: the launch is refused
 *   AOTC_LOG=1         one line on stderr per launch: kernel, shape, variant
 *
 * aotc emit copies this text into each launcher; a translation unit that
 * includes several launchers (aotc link) compiles it once. With none of the
 * variables set a launch pays one predictable branch. */
#ifndef AOTC_LAUNCHER_ENV
#define AOTC_LAUNCHER_ENV 1

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#define AOT_HAVE_FLOCK 1
#endif

namespace {

/* Seconds between two merges of the counts into the record file. */
const int AOT_RECORD_EVERY = 2;

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
	return a.shape < b.shape;
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

/* ---- One kernel's environment ------------------------------------------- */

class aot_env {
public:
	explicit aot_env(const aot_kernel_info *k)
	    : k_(k), record_(false), log_(false), forced_(-1), broken_(false),
	      last_(std::chrono::steady_clock::now())
	{
		const char *r = std::getenv("AOTC_RECORD");
		if (r && *r) {
			path_ = r;
			record_ = true;
		}
		const char *l = std::getenv("AOTC_LOG");
		log_ = l && *l && std::strcmp(l, "0") != 0;
		const char *v = std::getenv("AOTC_VARIANT");
		if (v && *v)
			parse_variant(v);
	}

	~aot_env()
	{
		if (record_) {
			std::lock_guard<std::mutex> g(mu_);
			flush();
		}
	}

	bool active() const { return record_ || log_ || forced_ != -1; }

	/* The variant to launch for shape given the dispatch's choice v (-1:
	 * none valid), or -1 when the launch must be refused. */
	int observe(const int64_t *shape, int v)
	{
		if (record_)
			count(shape);
		bool forced = forced_ >= 0;
		int run = forced_ == -2 ? -1 : forced ? (k_->valid_at(forced_, shape) ? forced_ : -1) : v;
		if (log_)
			log(shape, v, run, forced);
		return run;
	}

private:
	struct counts {
		unsigned long long calls, written;
	};

	const aot_kernel_info *k_;
	bool record_, log_;
	int forced_;                    /* -1: the dispatch; -2: AOTC_VARIANT names no variant */
	bool broken_;                   /* the record file was refused: said once */
	std::string path_;
	std::mutex mu_;
	std::map<std::vector<int64_t>, counts> seen_;
	std::chrono::steady_clock::time_point last_;

	static bool same_name(const char *a, const char *b)
	{
		for (;;) {
			while (*a == ' ')
				a++;
			while (*b == ' ')
				b++;
			if (*a != *b)
				return false;
			if (!*a)
				return true;
			a++, b++;
		}
	}

	/* kernel=INDEX|NAME items, split at commas outside <> and (). */
	void parse_variant(const char *text)
	{
		std::string s(text);
		size_t start = 0;
		int depth = 0;
		for (size_t i = 0; i <= s.size(); i++) {
			char c = i < s.size() ? s[i] : ',';
			depth += (c == '<' || c == '(') - (c == '>' || c == ')');
			if (c != ',' || depth > 0)
				continue;
			std::string item = s.substr(start, i - start);
			start = i + 1;
			size_t eq = item.find('=');
			std::string kernel = item.substr(0, eq);
			kernel.erase(0, kernel.find_first_not_of(' '));
			kernel.erase(kernel.find_last_not_of(' ') + 1);
			if (eq == std::string::npos || kernel.empty()) {
				std::fprintf(stderr, "aotc: AOTC_VARIANT: '%s' is not kernel=INDEX or kernel=NAME; ignored\n",
				             item.c_str());
				continue;
			}
			if (kernel == k_->kernel)
				forced_ = find(item.substr(eq + 1));
		}
	}

	int find(const std::string &want)
	{
		int n = k_->num_variants();
		size_t digits = want.find_first_not_of("0123456789 ");
		if (digits == std::string::npos && want.find_first_not_of(' ') != std::string::npos) {
			long i = std::strtol(want.c_str(), NULL, 10);
			if (i >= 0 && i < n)
				return (int)i;
		}
		for (int i = 0; digits != std::string::npos && i < n; i++)
			if (same_name(k_->variant_name(i), want.c_str()))
				return i;
		std::string list;
		for (int i = 0; i < n; i++) {
			char num[16];
			std::snprintf(num, sizeof num, "%s%d ", i ? ", " : "", i);
			list += num;
			list += k_->variant_name(i);
		}
		std::fprintf(stderr, "aotc: AOTC_VARIANT: %s (%s) has no variant '%s'; its variants: %s; every launch is refused\n",
		             k_->kernel, k_->tag, want.c_str(), list.c_str());
		return -2;
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
			line += " -> refused (AOTC_VARIANT names no variant)";
		} else {
			line += " -> no valid variant: not launched";
		}
		line += "\n";
		std::fputs(line.c_str(), stderr);
	}

	void count(const int64_t *shape)
	{
		std::lock_guard<std::mutex> g(mu_);
		seen_[std::vector<int64_t>(shape, shape + k_->nargs)].calls++;
		std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
		if (now - last_ >= std::chrono::seconds(AOT_RECORD_EVERY)) {
			last_ = now;
			flush();
		}
	}

	void fail(const char *what)
	{
		if (!broken_)
			std::fprintf(stderr, "aotc: AOTC_RECORD: %s %s: %s\n", what, path_.c_str(), std::strerror(errno));
		broken_ = true;
	}

	/* Adds what was counted since the last merge to the file: under a lock
	 * on FILE.lock (processes), read, add, write a temporary, rename. With
	 * mu_ held (threads). */
	void flush()
	{
		bool news = false;
		for (std::map<std::vector<int64_t>, counts>::iterator i = seen_.begin(); i != seen_.end(); ++i)
			news |= i->second.calls != i->second.written;
		if (!news || !record_)
			return;
#ifdef AOT_HAVE_FLOCK
		std::string lock_path = path_ + ".lock";
		int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (lock < 0) {
			fail("cannot open the lock of");
			return;
		}
		while (flock(lock, LOCK_EX) < 0 && errno == EINTR)
			;
#endif
		aot_record rec;
		std::string text;
		std::FILE *f = std::fopen(path_.c_str(), "rb");
		if (f) {
			char buf[65536];
			size_t n;
			while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
				text.append(buf, n);
			std::fclose(f);
		}
		bool ok = true;
		if (!f && errno != ENOENT) {
			fail("cannot read");
			ok = false;
		} else if (text.find_first_not_of(" \t\r\n") != std::string::npos && !aot_reader(text).read(rec)) {
			if (!broken_)
				std::fprintf(stderr, "aotc: AOTC_RECORD: %s is not a record file aotc wrote; it is left as it is and nothing is recorded\n",
				             path_.c_str());
			broken_ = true;
			record_ = false;
			ok = false;
		}
		if (ok)
			ok = merge_and_write(rec);
#ifdef AOT_HAVE_FLOCK
		close(lock);
#endif
		if (ok)
			for (std::map<std::vector<int64_t>, counts>::iterator i = seen_.begin(); i != seen_.end(); ++i)
				i->second.written = i->second.calls;
	}

	bool merge_and_write(aot_record &rec)
	{
		std::vector<aot_row> &rows = rec[k_->kernel];
		for (std::map<std::vector<int64_t>, counts>::iterator i = seen_.begin(); i != seen_.end(); ++i) {
			unsigned long long add = i->second.calls - i->second.written;
			if (!add)
				continue;
			aot_row want;
			for (int a = 0; a < k_->nargs; a++)
				want.shape.push_back(std::make_pair(std::string(k_->args[a]), (long long)i->first[a]));
			size_t r = 0;
			while (r < rows.size() && rows[r].shape != want.shape)
				r++;
			if (r == rows.size()) {
				want.calls = 0;
				rows.push_back(want);
			}
			rows[r].calls += add;
		}
		std::string text = aot_write_record(rec);
		char pid[32];
#ifdef AOT_HAVE_FLOCK
		std::snprintf(pid, sizeof pid, ".tmp%ld", (long)getpid());
#else
		std::snprintf(pid, sizeof pid, ".tmp");
#endif
		std::string tmp = path_ + pid;
		std::FILE *f = std::fopen(tmp.c_str(), "wb");
		if (!f) {
			fail("cannot write");
			return false;
		}
		bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
		ok &= std::fclose(f) == 0;
		if (ok && std::rename(tmp.c_str(), path_.c_str()) != 0) {
#ifdef AOT_HAVE_FLOCK
			ok = false;
#else
			std::remove(path_.c_str()); /* where rename does not replace */
			ok = std::rename(tmp.c_str(), path_.c_str()) == 0;
#endif
		}
		if (!ok) {
			fail("cannot write");
			std::remove(tmp.c_str());
		}
		return ok;
	}
};

} /* namespace */

#endif
