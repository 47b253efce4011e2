/*
 * The tree's shape (tree/shape.h): every row of the root, of tokenizer/
 * and of a tensor's directory, on each model given, is found by its name, numbered
 * by an inode that leads back to it and to no other, statted at the size
 * of its bytes where those are a text rendered from the model, and listed
 * once; and every kind says what it is coherently.
 *
 *   usage: test_shape MODEL.gguf...
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tree/attr.h"
#include "tree/shape.h"
#include "tree/text.h"

static int test_kinds_are_coherent(void)
{
    for (int k = 0; k < GGFS_KIND_COUNT; k++) {
        const unsigned flags = ggfs_kind_flags((ggfs_kind)k);
        EXPECT(!((flags & GGFS_K_DIR) && (flags & (GGFS_K_TEXT | GGFS_K_FOLLOWS_KEYS))));
        EXPECT(!(flags & GGFS_K_READS_DATA) || (flags & GGFS_K_TEXT));
    }
    EXPECT_EQ(ggfs_kind_flags(GGFS_KIND_COUNT), 0);
    EXPECT_EQ(ggfs_kind_flags(GGFS_NONE), 0);
    size_t n = 0;
    for (const ggfs_row *r = ggfs_tensor_rows; r->name; r++, n++) {
        EXPECT(ggfs_kind_is(r->kind, GGFS_K_OF_TENSOR));
        EXPECT_EQ(r->ino, n + 1);
    }
    EXPECT_EQ(n + 1, GGFS_TENSOR_INODES);
    for (const ggfs_row *r = ggfs_root_rows; r->name; r++) {
        EXPECT(r->ino > GGFS_INO_ROOT && r->ino < GGFS_INO_FIRST_KV);
        EXPECT(!ggfs_kind_is(r->kind, GGFS_K_OF_TENSOR));
        for (const ggfs_row *o = ggfs_root_rows; o < r; o++)
            EXPECT(o->ino != r->ino && o->kind != r->kind && strcmp(o->name, r->name) != 0);
        // The fixed directories' files share the inodes below the keys'.
        for (const ggfs_row *o = ggfs_tokenizer_rows; o->name; o++)
            EXPECT(o->ino != r->ino && o->kind != r->kind);
        EXPECT(ggfs_fixed_row_at_ino(r->ino) == r);
        EXPECT(ggfs_fixed_row_of_kind(r->kind) == r);
    }
    for (const ggfs_row *r = ggfs_tokenizer_rows; r->name; r++) {
        EXPECT(r->ino > GGFS_INO_ROOT && r->ino < GGFS_INO_FIRST_KV);
        EXPECT(ggfs_fixed_row_at_ino(r->ino) == r);
        EXPECT(ggfs_fixed_row_of_kind(r->kind) == r);
    }
    EXPECT(ggfs_fixed_rows(GGFS_ROOT) == ggfs_root_rows);
    EXPECT(ggfs_fixed_rows(GGFS_TOKENIZER_DIR) == ggfs_tokenizer_rows);
    EXPECT(ggfs_fixed_rows(GGFS_TENSOR_DIR) == NULL);
    return 1;
}

/* One row in one directory of tree: found, numbered both ways, statted. */
static int check_row(ggfs_tree *tree, ggfs_node dir, const ggfs_row *row)
{
    const ggfs_node node = ggfs_lookup(tree, dir, row->name);
    EXPECT_EQ(node.kind, row->kind);
    EXPECT_EQ(node.index, dir.kind == GGFS_TENSOR_DIR ? dir.index : 0);
    const uint64_t ino = ggfs_ino_of(tree, node);
    EXPECT(ino != 0);
    const ggfs_node back = ggfs_node_of(tree, ino);
    EXPECT_EQ(back.kind, node.kind);
    EXPECT_EQ(back.index, node.index);
    struct stat st;
    if (!ggfs_node_exists(tree, node)) {
        EXPECT(!ggfs_stat(tree, node, &st));
        return 1;
    }
    EXPECT(ggfs_stat(tree, node, &st));
    EXPECT_EQ(st.st_ino, ino);
    EXPECT_EQ(S_ISDIR(st.st_mode), ggfs_kind_is(row->kind, GGFS_K_DIR));
    // Texts rendered from the keys and tensors alone: their size is their
    // bytes (the others are read by the bats suites through a mount).
    if (row->kind == GGFS_HEADER || row->kind == GGFS_TENSOR_INFO || row->kind == GGFS_TENSORS_TSV ||
        row->kind == GGFS_METADATA_JSON || row->kind == GGFS_WARNINGS || row->kind == GGFS_VOCAB_TSV ||
        row->kind == GGFS_SPECIAL_TOKENS) {
        ggp_counting_sink c;
        ggp_counting_sink_init(&c);
        ggfs_view *view = ggfs_tree_view(tree);
        EXPECT(ggfs_text_render(tree, view, node, &c.sink));
        ggfs_view_put(view);
        EXPECT_EQ(c.total, (uint64_t)st.st_size);
    }
    return 1;
}

static int test_rows_of(const char *path)
{
    ggfs_model_error err;
    ggfs_model *model = ggfs_model_open(path, NULL, &err);
    EXPECT(model != NULL);
    ggfs_tree tree;
    EXPECT(ggfs_tree_init(&tree, model));
    int ok = 1;
    const ggfs_node root = ggfs_node_of(&tree, GGFS_INO_ROOT);
    EXPECT_EQ(root.kind, GGFS_ROOT);
    for (const ggfs_row *r = ggfs_root_rows; ok && r->name; r++)
        ok = check_row(&tree, root, r);
    const ggfs_node tokenizer = ggfs_node_at(GGFS_TOKENIZER_DIR, 0);
    for (const ggfs_row *r = ggfs_tokenizer_rows; ok && r->name; r++)
        ok = check_row(&tree, tokenizer, r);
    for (uint64_t t = 0; ok && t < model->n_tensors; t++) {
        const ggfs_node dir = ggfs_node_at(GGFS_TENSOR_DIR, t);
        for (const ggfs_row *r = ggfs_tensor_rows; ok && r->name; r++)
            ok = check_row(&tree, dir, r);
    }
    // No two nodes share an inode: the last tensor's last file is the
    // highest number, one below where the first added key's would be.
    if (ok && model->n_tensors) {
        const ggfs_node last = ggfs_node_at(GGFS_TENSOR_SHA256, model->n_tensors - 1);
        const ggfs_node first = ggfs_node_at(GGFS_TENSOR_DIR, 0);
        ok = ggfs_ino_of(&tree, last) - ggfs_ino_of(&tree, first) + 1 == model->n_tensors * GGFS_TENSOR_INODES;
        if (!ok)
            fprintf(stderr, "%s: the tensors' inodes are not contiguous\n", path);
    }
    ggfs_tree_destroy(&tree);
    ggfs_model_close(model);
    return ok;
}

int main(int argc, char **argv)
{
    int ok = test_kinds_are_coherent();
    for (int i = 1; i < argc; i++)
        ok &= test_rows_of(argv[i]);
    return ok && argc > 1 ? 0 : 1;
}
