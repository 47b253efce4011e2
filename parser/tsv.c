/*
 * The rows of tensors.tsv: a header line, then one line per tensor with
 * the fields of its info file, tab-separated, for awk, cut and pandas:
 *
 *   name	type	shape	elements	bytes	offset	shard
 *   blk.0.attn_q.weight	q4_K	4096,4096	16777216	9437184	7340288	1
 *
 * The name is escaped as strings in arrays are (a tab becomes \t, so a
 * line always has seven fields); a tensor of unknown type has "unknown(ID)"
 * and bytes "unknown", as in info.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ggp_i.h"

void ggp_render_tsv_header(ggp_sink *sink)
{
    static const char header[] = "name\ttype\tshape\telements\tbytes\toffset\tshard\n";
    sink->write(sink, header, sizeof header - 1);
}

size_t ggp_format_type_name(const ggp_tensor *t, char *buf)
{
    if (t->type)
        return (size_t)snprintf(buf, GGP_TYPE_NAME_SIZE, "%s", t->type->name);
    return (size_t)snprintf(buf, GGP_TYPE_NAME_SIZE, "unknown(%" PRIu32 ")", t->type_id);
}

void ggp_render_tsv_row(const ggp_tensor *t, uint32_t shard, ggp_sink *sink)
{
    ggp_render_line_escaped(t->name, sink);
    // Everything after the name fits easily: a type name, four dimensions
    // and four numbers of at most 20 digits.
    char line[GGP_TYPE_NAME_SIZE + 4 * 21 + 4 * 21 + 8];
    size_t o = 0;
    line[o++] = '\t';
    o += ggp_format_type_name(t, line + o);
    line[o++] = '\t';
    for (uint32_t j = 0; j < t->n_dims; j++)
        o += (size_t)sprintf(line + o, j ? ",%" PRId64 : "%" PRId64, t->ne[j]);
    o += (size_t)sprintf(line + o, "\t%" PRIu64 "\t", t->elements);
    if (t->type)
        o += (size_t)sprintf(line + o, "%" PRIu64, t->bytes);
    else
        o += (size_t)sprintf(line + o, "unknown");
    o += (size_t)sprintf(line + o, "\t%" PRIu64 "\t%" PRIu32 "\n", t->offset, shard);
    sink->write(sink, line, o);
}
