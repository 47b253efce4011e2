/*
 * sha256sum's lines, as GNU coreutils writes them and `sha256sum -c` reads
 * them: a SHA256SUMS file beside models, one line per file, and a
 * FILE.sha256 holding one. Pure: bytes in memory, nothing read past the
 * length given, every byte of a line checked.
 *
 *   <64 hex digits><space><space or *><name>\n
 *   \<64 hex digits><space><space or *><name, escaped>\n
 *
 * The second form is sha256sum's for a name holding a backslash, a newline
 * or a carriage return: in it `\\`, `\n` and `\r` stand for those bytes,
 * and any other backslash makes the line malformed. As `sha256sum -c`
 * reads them, blanks before a line are skipped and the first space may be
 * a tab; a line may end in "\r\n" (a file written on Windows). Malformed
 * lines are skipped, as comments and blank lines are. (BSD's forms,
 * `SHA256 (name) = hex` and `hex name`, are not read.)
 */
#ifndef GGFS_SOURCE_SUMS_H
#define GGFS_SOURCE_SUMS_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_SUMS_HEX 64          // a SHA-256 in hex digits
#define GGFS_SUMS_LINE_MAX 4096   // bytes of a line, its newline not counted; longer ones are skipped

/* One well-formed line: views into the bytes it was parsed from. */
typedef struct ggfs_sums_line {
    const char *hex;  // GGFS_SUMS_HEX hex digits, either case
    const char *name; // as written (escaped when `escaped`), never empty
    size_t name_len;
    bool escaped;
} ggfs_sums_line;

/* Parses line[0, len), without its '\n'. Returns false, leaving *out
 * unspecified, for a malformed line (or one longer than
 * GGFS_SUMS_LINE_MAX). */
bool ggfs_sums_parse_line(const char *line, size_t len, ggfs_sums_line *out);

/* Whether the line names the file `name` (name_len bytes, no NUL needed):
 * its unescaped name is name, or "./" then name. */
bool ggfs_sums_line_names(const ggfs_sums_line *l, const char *name, size_t name_len);

/* Looks through text[0, len) for the first well-formed line naming name
 * and copies its GGFS_SUMS_HEX digits into hex. `whole`: text is the whole
 * file, so a last line without its '\n' is read; else the reader stopped
 * at its bound and that line, perhaps cut short, is not. */
bool ggfs_sums_find(const char *text, size_t len, bool whole, const char *name, size_t name_len,
                    char hex[GGFS_SUMS_HEX]);

/* A FILE.sha256: its first line is GGFS_SUMS_HEX hex digits, then its end
 * or whitespace (and a name, which is not read: the file names its file
 * by its own name). Copies the digits into hex. */
bool ggfs_sums_single(const char *text, size_t len, char hex[GGFS_SUMS_HEX]);

#endif
