/* Variants run in a worker process (`aotc __worker`) so that a fault or a
 * hang takes down the worker, never the tuner. The tuner sends one JSON
 * request a line on the worker's stdin and reads one JSON reply a line from
 * its stdout:
 *
 *   {"op": "init", "arch", "ir", "kernel", "seed", "method", "device"?}
 *       -> {"status", "device", "index", "count"}
 *   {"op": "shape", "row", "reference": {"blob", "symbol", "launch"}
 *                                     | {"blob", "symbol", "host": true} | null}
 *                                                         -> {"status", "note"}
 *   {"op": "measure", "blob", "symbol", "launch", "values", "best_ms", "extern"?}
 *       -> {"status", "samples", "error", "screened", "note", "became_reference"}
 *
 * where init's "device" is the index of the device to open (without it:
 * $AOTC_DEVICE's or the backend's default), and its reply's "index" that
 * of the one opened and "count" how many the backend sees;
 * where "extern": true (values then []) runs an AOTC_EXTERN routine's caller,
 * its buffers sized as the reference's; a "returned_error" status says the
 * routine returned an error (note: which), the device being fine.
 * where "host": true is a host reference: a shared object whose entry
 * (rt_host_entry) the worker calls itself on host copies of the buffers;
 * where launch is {"grid": [x, y, z], "block": [x, y, z], "smem": n}. After a
 * "fault" reply the worker exits (the device context is lost).
 *
 * Every request carries "id" (worker_call sets a fresh one) and every reply
 * echoes it with "pid", the worker's; a reply with another id or pid (a
 * process a variant forked, answering for the worker) ends the worker. A
 * "resources" reply with "too_large": true is the buffers' memory limit
 * (rt_device_info.buffer_limit), not the launch. After a measure the worker
 * checks what the variant left behind (threads, children, timers, signal
 * handling, the working directory, the floating-point environment); a
 * variant that changed any gets "fault" with a note saying what, and the
 * worker exits so that the next variant runs in a fresh process. */
#ifndef AOTC_WORKER_H
#define AOTC_WORKER_H

#include "status.h"
#include <jansson.h>

#include "util.h"

/* The worker's main loop on stdin/stdout; returns the exit status. */
int worker_main(void);

typedef struct worker worker;

/* Starts `exe __worker` in a process group of its own (killing it kills
 * what its variants forked). NULL with err set if it cannot be spawned. */
worker *worker_start(const char *exe, strbuf *err);
/* Kills (if running) and reaps the worker. Accepts NULL. */
void worker_stop(worker *w);

typedef enum call_result {
	CALL_OK,       /* *reply set (caller json_decref's it) */
	CALL_TIMEOUT,  /* no reply in time: the worker was killed */
	CALL_DIED,     /* the worker exited or was killed by a signal, or answered
	                  out of turn or malformed (then it was killed); why says how */
} call_result;

/* Sends request (an "id" is added for the call and removed again) and
 * waits up to timeout_ms for the reply to it. A worker that died, timed
 * out or answered out of turn is gone (killed with its process group, and
 * reaped); every later call answers CALL_DIED until worker_stop. */
call_result worker_call(worker *w, json_t *request, double timeout_ms, json_t **reply,
                        strbuf *why);

#endif
