/*
 * fuzz_replay.c - runs fuzz_reply.c's LLVMFuzzerTestOneInput once over each file named on
 * the command line: the seed corpus and its regression cases, replayed by `make test` in the
 * sanitized gcc build, where clang's libFuzzer may be missing. Exit 0 when every input
 * passed (a failed invariant or a sanitizer error aborts), 2 when a file cannot be read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    int bad = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *grown = realloc(data, cap);
            if (grown == NULL) {
                bad = 1;
                break;
            }
            data = grown;
        }
        size_t n = fread(data + size, 1, cap - size, f);
        if (n == 0) {
            bad = ferror(f) != 0;
            break;
        }
        size += n;
    }
    fclose(f);
    if (bad) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        free(data);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_replay FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (replay(argv[i]) != 0) return 2;
    printf("fuzz_replay: %d inputs, no invariant failed\n", argc - 1);
    return 0;
}
