/* bin/client-hft: the HFT-optimized load client (see ../README.md). Flags -> run -> result. */
#include "hb_probe.h"
#include "hft_app.h"

int main(int argc, char *argv[]) {
    hft_app app;
    hft_app_init(&app, "hft", "client-hft");
    hft_app_parse(&app, argc, argv, NULL, 0);
    hb_probe_or_exit(app.prog, &app.cfg.url);
    return hft_app_run(&app, NULL, 0);
}
