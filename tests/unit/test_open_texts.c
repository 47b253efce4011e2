/*
 * The open texts of a mount (tree/open_text.h): the last put of a text
 * takes it off its mount's list, and what is left when the mount ends
 * (an unmount drops the RELEASEs the kernel had not sent yet) is freed by
 * the drain; ASan's leak check and its use-after-free check make both
 * halves fail if either frees too little or twice.
 */
#include "check.h"
#include "tree/open_text.h"

static size_t listed(ggfs_open_texts *set)
{
    size_t n = 0;
    for (ggfs_dlink *l = set->all.next; l != &set->all; l = l->next)
        n++;
    return n;
}

static int test_released_ones_leave_the_rest_are_drained(void)
{
    ggfs_open_texts set;
    ggfs_open_texts_init(&set);
    ggfs_open_text *t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = ggfs_open_text_new(&set, false);
        EXPECT(t[i] != NULL);
        t[i]->text.sink.write(&t[i]->text.sink, "some text\n", 10);
    }
    EXPECT_EQ(listed(&set), 4);
    // A read's reference, then the release: gone at the last put only.
    ggfs_open_text_ref(t[1]);
    ggfs_open_text_put(t[1]);
    EXPECT_EQ(listed(&set), 4);
    ggfs_open_text_put(t[1]);
    ggfs_open_text_put(t[3]);
    EXPECT_EQ(listed(&set), 2);
    // t[0] and t[2] were never released: the mount's end frees them.
    ggfs_open_texts_drain(&set);
    return 1;
}

static int test_texts_of_no_mount_are_freed_by_their_last_put(void)
{
    ggfs_open_text *t = ggfs_open_text_new(NULL, false);
    EXPECT(t != NULL);
    t->text.sink.write(&t->text.sink, "x", 1);
    ggfs_open_text_put(t);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_released_ones_leave_the_rest_are_drained();
    ok &= test_texts_of_no_mount_are_freed_by_their_last_put();
    return ok ? 0 : 1;
}
