#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// BEGIN PROMPT
/**
Print the note called name from the directory notes_dir. A name that leads
outside notes_dir, or a note that does not exist, prints nothing.

@param name The note's name, relative to notes_dir; chosen by a user.
@param notes_dir The directory holding the notes.
@return 0 when the note was printed, 1 otherwise.
*/
int print_note(const char *name, const char *notes_dir) {
    // BEGIN SOLUTION
    char dir[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
    if (realpath(notes_dir, dir) == NULL) {
        return 1;
    }
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        return 1;
    }
    if (realpath(path, real) == NULL) {
        return 1;
    }
    size_t n = strlen(dir);
    if (strncmp(real, dir, n) != 0 || real[n] != '/') {
        return 1;
    }
    FILE *f = fopen(real, "r");
    if (f == NULL) {
        return 1;
    }
    int c;
    while ((c = fgetc(f)) != EOF) {
        putchar(c);
    }
    fclose(f);
    return 0;
}

// BEGIN ENTRYPOINT
int main(int argc, char *argv[]) {
    if (argc != 3) {
        return 2;
    }
    print_note(argv[1], argv[2]);
    return 0;
}
