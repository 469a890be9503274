/*
 * main.c - the native CLI: a thin shell over lab_cli() (cli.c), so the
 * native and WASM builds print the same output.
 */
#include <stdio.h>

#include "lab.h"

int main(int argc, char **argv)
{
	char *out = NULL, *err = NULL;
	int status = lab_cli(argc, (const char *const *)argv, &out, &err);
	if (out)
		fputs(out, stdout);
	if (err)
		fputs(err, stderr);
	lab_free(out);
	lab_free(err);
	return status;
}
