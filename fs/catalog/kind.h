/*
 * The kinds of a catalog's entries: the directories of each store
 * (store.h has a row per kind of directory), and models.
 */
#ifndef GGFS_CATALOG_KIND_H
#define GGFS_CATALOG_KIND_H

typedef enum ggfs_cat_kind {
    GGFS_CAT_DIR,    // a directory of the folder
    GGFS_CAT_OLLAMA, // ollama/ or a directory in it
    GGFS_CAT_HF,     // hf/ or a directory in it (a Hugging Face hub cache's)
    GGFS_CAT_HF_REPO, // a folder of a Hub repo at one commit (hf://ORG/REPO)
    GGFS_CAT_HF_AUTHOR, // the repos of a Hub author (hf://ORG)
    GGFS_CAT_S3,     // a prefix of an S3 bucket (s3://BUCKET[/PREFIX])
    GGFS_CAT_MODEL,  // a model's directory
} ggfs_cat_kind;

#endif
