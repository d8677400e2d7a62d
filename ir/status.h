/* What a stage tells its caller, and what aotc exits with (SPEC §3): every
 * module that can fail for a reason the user must hear about returns one of
 * these. Only tools/ turns it into a process exit status. */
#ifndef AOTC_STATUS_H
#define AOTC_STATUS_H

typedef enum aotc_status {
	AOTC_OK = 0,
	AOTC_DIAGNOSED = 1,   /* the input has errors; they went through diags */
	AOTC_USAGE = 2,       /* the command line is wrong */
	AOTC_ENVIRONMENT = 3, /* no device or toolkit, an unreadable or unwritable file */
	AOTC_NO_VARIANT = 4,  /* nothing compiled and ran correctly */
} aotc_status;

#endif
