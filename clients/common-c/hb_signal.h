/**
 * hb_signal.h - SIGINT (and SIGTERM) ask the run to stop: workers poll
 * hb_signal_stop_requested(), stop sending, drain, and the result so far is
 * written with "interrupted": true.
 */
#ifndef HB_SIGNAL_H
#define HB_SIGNAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Install the handlers. @return 0, or -1 with errno set. */
int hb_signal_install(void);

/** True once SIGINT/SIGTERM arrived (or hb_signal_request_stop was called). */
bool hb_signal_stop_requested(void);

/** Ask for a stop from code, as the signal would (tests, fatal worker errors). */
void hb_signal_request_stop(void);

#ifdef __cplusplus
}
#endif
#endif
