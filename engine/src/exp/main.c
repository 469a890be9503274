/*
 * main.c - the native CLI: a thin shell over lab_cli() (cli.c), so the
 * native and WASM builds print the same output. The one thing it adds is
 * file access, which the engine has not: `--script FILE` is read here and
 * passed on as `--script-text TEXT` (cli/lab.mjs does the same under Node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define SCRIPT_FILE_MAX 65536

int main(int argc, char **argv)
{
	char *out = NULL, *err = NULL, *text = NULL;
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--script") || text)
			continue;
		FILE *f = fopen(argv[i + 1], "rb");
		text = f ? calloc(1, SCRIPT_FILE_MAX + 1) : NULL;
		size_t n = text ? fread(text, 1, SCRIPT_FILE_MAX + 1, f) : 0;
		if (f)
			fclose(f);
		if (!text || n > SCRIPT_FILE_MAX) {
			fprintf(stderr, "lab: --script %s: %s\n", argv[i + 1],
				!f ? "cannot read the file" : "longer than 64 KiB");
			free(text);
			return 2;
		}
		text[n] = 0;
		argv[i] = "--script-text";
		argv[i + 1] = text;
	}
	int status = lab_cli(argc, (const char *const *)argv, &out, &err);
	if (out)
		fputs(out, stdout);
	if (err)
		fputs(err, stderr);
	lab_free(out);
	lab_free(err);
	free(text);
	return status;
}
