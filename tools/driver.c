#include "driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbset.h"
#include "frontend.h"
#include "measure.h"
#include "util.h"

aotc_module *driver_load_module(const options *o, bool saved_ir, diags *d)
{
	size_t n = strlen(o->file);
	if (n > 5 && strcmp(o->file + n - 5, ".json") == 0) {
		size_t len;
		char *text = read_file_max(o->file, &len, (size_t)AOTC_INPUT_MAX_MIB << 20);
		if (!text && errno == EFBIG) {
			diag_error(d, (aotc_loc){o->file, 0, 0}, "larger than %d MiB (the limit on IR files)",
			           AOTC_INPUT_MAX_MIB);
			return NULL;
		}
		if (!text) {
			diag_plain_error(d, "cannot read '%s': %s", o->file, strerror(errno));
			return NULL;
		}
		aotc_module *m = ir_from_json(text, len, o->file, d);
		free(text);
		return m;
	}
	frontend_options fo = {
		.include_dirs = o->includes, .ninclude_dirs = o->nincludes,
		.defines = o->defines, .ndefines = o->ndefines, .verbose = o->verbose,
	};
	if (!saved_ir)
		return frontend_parse(o->file, &fo, d);
	char *saved = dbset_ir_path(o->db_dir, o->file);
	bool reused;
	aotc_module *m = frontend_parse_saved(o->file, &fo, saved, &reused, d);
	free(saved);
	return m;
}

bool driver_kernel_selected(const options *o, const aotc_module *m, diags *d)
{
	bool found = false;
	for (int i = 0; i < m->nkernels; i++)
		found |= ir_kernel_selected(&m->kernels[i], o->kernel);
	if (o->kernel && !found) {
		diag_plain_error(d, "no tuned kernel '%s' in '%s'", o->kernel, o->file);
		return false;
	}
	if (m->nkernels == 0) {
		diag_plain_error(d, "no tuned kernels in '%s' (annotate one with AOTC_TUNE)", o->file);
		return false;
	}
	return true;
}

/* --quick's sampling or the default, with the options given over it. */
static sampling driver_sampling(const options *o)
{
	sampling sp = o->quick ? SAMPLING_QUICK : SAMPLING_DEFAULT;
	if (o->samples > 0) {
		sp.max_samples = o->samples;
		sp.min_samples = o->samples < sp.min_samples ? o->samples : sp.min_samples;
	}
	if (o->checks > 0)
		sp.min_checks = o->checks;
	if (o->warmup >= 0)
		sp.warmup = o->warmup;
	if (o->cell_time_s > 0)
		sp.budget_ms = o->cell_time_s * 1e3;
	if (o->screen >= 0)
		sp.screen_factor = o->screen;
	return sp;
}

tune_options driver_tune_options(const options *o)
{
	static const search_kind searches[] = {
		[OPTIONS_SEARCH_AUTO] = SEARCH_AUTO, [OPTIONS_SEARCH_EXHAUSTIVE] = SEARCH_EXHAUSTIVE,
		[OPTIONS_SEARCH_MODEL] = SEARCH_MODEL,
	};
	static const tune_dump dumps[] = {
		[OPTIONS_DUMP_NONE] = TUNE_DUMP_NONE, [OPTIONS_DUMP_CONFIGS] = TUNE_DUMP_CONFIGS,
		[OPTIONS_DUMP_COMPILE] = TUNE_DUMP_COMPILE, [OPTIONS_DUMP_SCHEDULE] = TUNE_DUMP_SCHEDULE,
	};
	return (tune_options){
		.arch = o->arch, .db_dir = o->db_dir, .shapes_file = o->shapes,
		.budget_s = o->budget_s, .jobs = o->jobs, .seed = (uint64_t)o->seed,
		.search = searches[o->search], .dump = dumps[o->dump],
		.shard = o->nshards ? o->shard : 1, .nshards = o->nshards ? o->nshards : 1,
		.alt_rounds = o->alternate >= 0 ? o->alternate : o->quick ? 0 : ALT_ROUNDS,
		.devices = o->devices_listed ? o->devices : NULL, .ndevices = o->ndevices,
		.sampling = driver_sampling(o),
		.quiet = o->quiet, .verbose = o->verbose,
		.include_dirs = o->includes, .ninclude_dirs = o->nincludes,
		.defines = o->defines, .ndefines = o->ndefines,
	};
}

void driver_hoptions(const options *o, hoptions *ho)
{
	hoptions_default(ho);
	ho->seed = (uint64_t)o->seed;
	if (o->max_variants)
		ho->max_variants = o->max_variants;
	if (o->goal > 0)
		ho->goal = o->goal;
}

learn_options driver_learn_options(const options *o)
{
	learn_options lo = {.db_dir = o->db_dir, .arch = o->arch, .file = o->file,
	                    .defines = o->defines, .ndefines = o->ndefines, .verbose = o->verbose};
	driver_hoptions(o, &lo.ho);
	return lo;
}

