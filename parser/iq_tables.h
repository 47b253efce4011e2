/*
 * Lookup grids and code books of ggml's importance-matrix ("iq") quant types.
 *
 * These are part of the on-disk format, not tunables: a block stores indices
 * into them, so every value must equal ggml's. They are transcribed from
 * ggml's src/ggml-common.h (MIT licence, see iq_tables.c) under the same
 * names with a ggp_ prefix.
 *
 * The grids pack one small vector per entry, element j in byte j counting
 * from the least significant byte (ggml reads them through a uint8_t pointer
 * on a little-endian host). Consumers extract bytes with shifts so the
 * result does not depend on the host byte order.
 */
#ifndef GGP_IQ_TABLES_H
#define GGP_IQ_TABLES_H

#include <stdint.h>

/* Additive offset of the iq1 grids, applied after the ±1/0 grid value. */
#define GGP_IQ1S_DELTA 0.125f
#define GGP_IQ1M_DELTA 0.125f

#define GGP_NGRID_IQ1S 2048

/* Bit j of a sign byte flips element j. */
extern const uint8_t ggp_kmask_iq2xs[8];

/* 7 stored sign bits -> 8 sign bits; the 8th makes the count of negatives
 * even, which is why only 7 bits need to be stored. */
extern const uint8_t ggp_ksigns_iq2xs[128];

/* 8 unsigned magnitudes per entry (iq2 types). */
extern const uint64_t ggp_iq2xxs_grid[256];
extern const uint64_t ggp_iq2xs_grid[512];
extern const uint64_t ggp_iq2s_grid[1024];

/* 4 unsigned magnitudes per entry (iq3 types). */
extern const uint32_t ggp_iq3xxs_grid[256];
extern const uint32_t ggp_iq3s_grid[512];

/* 8 signed bytes per entry, each -1, 0 or +1 (iq1 types). */
extern const uint64_t ggp_iq1s_grid[GGP_NGRID_IQ1S];

/* The 16 non-linear levels of iq4_nl and iq4_xs. */
extern const int8_t ggp_kvalues_iq4nl[16];

#endif
