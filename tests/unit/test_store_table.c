/*
 * The table of stores (catalog/store.h): every kind of directory has a
 * row that lists and opens, and models have none; the remote stores say
 * what their listings publish of a model's files, the local ones leave
 * that to the files.
 */
#include "catalog/store.h"
#include "check.h"

static int test_every_directory_kind_has_a_whole_row(void)
{
    for (int k = 0; k <= GGFS_CAT_MODEL; k++) {
        const ggfs_store *s = ggfs_store_of((ggfs_cat_kind)k);
        if (k == GGFS_CAT_MODEL) {
            EXPECT(!s);
            continue;
        }
        EXPECT(s && s->name && s->name[0] && s->list && s->open_model);
        EXPECT(s->life == GGFS_LIFE_TTL || s->life == GGFS_LIFE_MOUNT);
    }
    EXPECT(!ggfs_store_of((ggfs_cat_kind)1000));
    return 1;
}

/* A folder's listing is read again at each opendir, so that a file just
 * added shows at once; its views' too. */
static int test_local_stores_list_afresh_for_each_opendir(void)
{
    EXPECT(ggfs_store_of(GGFS_CAT_DIR) == &ggfs_store_folder);
    EXPECT(ggfs_store_folder.relist_on_opendir && ggfs_store_folder.life == GGFS_LIFE_TTL);
    EXPECT(!ggfs_store_folder.ident_by_place);
    EXPECT(ggfs_store_ollama_view.relist_on_opendir && ggfs_store_ollama_view.ident_by_place);
    EXPECT(ggfs_store_hf_view.relist_on_opendir && ggfs_store_hf_view.ident_by_place);
    return 1;
}

static int test_remote_stores_say_what_their_listings_publish(void)
{
    EXPECT(ggfs_store_hf_repo.published && ggfs_store_s3.published);
    EXPECT(!ggfs_store_folder.published && !ggfs_store_ollama_view.published && !ggfs_store_hf_view.published);
    // An S3 listing says the Size of the object a slot names, and nothing
    // of the split set's other shards (dropped on the way to it).
    const ggfs_store_env env = {0};
    const ggfs_store_model m = {.path = "s3://b/d/m-00001-of-00002.gguf", .real = "d/m-00001-of-00002.gguf",
                                .size = 77, .shards = 2};
    ggfs_published p;
    EXPECT(ggfs_store_s3.published(&env, &m, "s3://b/d/m-00001-of-00002.gguf", &p));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(p.size, 77);
    EXPECT(!ggfs_store_s3.published(&env, &m, "s3://b/d/m-00002-of-00002.gguf", &p));
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_every_directory_kind_has_a_whole_row();
    ok &= test_local_stores_list_afresh_for_each_opendir();
    ok &= test_remote_stores_say_what_their_listings_publish();
    return ok ? 0 : 1;
}
