/* What the commands of tools/main.c share: the module of FILE, and what
 * each stage takes of the options (parsed once, tools/options.h). */
#ifndef AOTC_DRIVER_H
#define AOTC_DRIVER_H

#include <stdbool.h>

#include "heuristic.h"
#include "ir.h"
#include "learn.h"
#include "options.h"
#include "tune.h"

/* The module of o->file: an IR file (*.json) read, or the source parsed
 * with -I and -D. With saved_ir (emit, where the speed matters), through
 * the IR saved under --db (frontend_parse_saved): no libclang when nothing
 * changed. NULL after a diagnostic. */
aotc_module *driver_load_module(const options *o, bool saved_ir, diags *d);

/* Checks --kernel against m, and that m has a tuned kernel; false after a
 * diagnostic. */
bool driver_kernel_selected(const options *o, const aotc_module *m, diags *d);

/* What the tuner, learning and the heuristic take of the options. */
tune_options driver_tune_options(const options *o);
learn_options driver_learn_options(const options *o);
void driver_hoptions(const options *o, hoptions *ho);

/* aotc report DB (tools/report_cmd.c): the database summarised in
 * o->format, learnt as emit learns where the kernel's source is still there
 * unchanged. */
aotc_status report_command(const options *o, diags *d);

#endif
