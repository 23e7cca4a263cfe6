/* bin/client-hft: the HFT-optimized load client (see ../README.md). Flags -> run -> result;
 * with --duet-url, a duet of two servers (hft_duet.h) -> two results. */
#include <stdio.h>

#include "hb_probe.h"
#include "hft_app.h"
#include "hft_duet.h"

int main(int argc, char *argv[]) {
    hft_app app;
    hft_duet_flags duet;
    hb_extra_option duet_options[HFT_DUET_N_OPTIONS];
    hft_app_init(&app, "hft", "client-hft");
    hft_duet_options(&duet, duet_options);
    hft_app_parse(&app, argc, argv, duet_options, HFT_DUET_N_OPTIONS);
    char err[HB_ERR_LEN];
    if (hft_duet_resolve(&app.cfg, &duet, hft_duet_connections_given(argc, argv), err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", app.prog, err);
        return 2;
    }
    if (duet.on) return hft_duet_main(&app, &duet);
    hb_probe_or_exit(app.prog, &app.cfg.url);
    return hft_app_run(&app, NULL, 0);
}
