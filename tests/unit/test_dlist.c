/*
 * The intrusive list every list of the daemon uses (util/dlist.h): order
 * of pushes, removal from the front, the back and the middle, and the
 * state of a link on no list.
 */
#include <stddef.h>

#include "check.h"
#include "util/dlist.h"

typedef struct item {
    int value;
    ggfs_dlink link;
} item;

static int value_of(ggfs_dlink *l)
{
    return GGFS_CONTAINER_OF(l, item, link)->value;
}

/* The values front to back, as digits ("" when empty), walked both ways. */
static int holds(ggfs_dlink *head, const char *want)
{
    char got[16] = "";
    size_t n = 0;
    for (ggfs_dlink *l = head->next; l != head && n < sizeof got - 1; l = l->next)
        got[n++] = (char)('0' + value_of(l));
    got[n] = '\0';
    EXPECT_STR(got, want);
    for (ggfs_dlink *l = head->prev; l != head; l = l->prev)
        EXPECT_EQ(value_of(l), want[--n] - '0');
    EXPECT_EQ(n, 0);
    EXPECT_EQ(ggfs_dlist_empty(head), want[0] == '\0');
    return 1;
}

static int test_pushes_keep_their_order(void)
{
    ggfs_dlink head;
    ggfs_dlist_init(&head);
    item a = {1, {NULL, NULL}}, b = {2, {NULL, NULL}}, c = {3, {NULL, NULL}};
    EXPECT(holds(&head, ""));
    EXPECT(ggfs_dlist_front(&head) == NULL && ggfs_dlist_back(&head) == NULL);
    ggfs_dlist_push_front(&head, &a.link);
    ggfs_dlist_push_front(&head, &b.link);
    ggfs_dlist_push_back(&head, &c.link);
    EXPECT(holds(&head, "213"));
    EXPECT_EQ(value_of(ggfs_dlist_front(&head)), 2);
    EXPECT_EQ(value_of(ggfs_dlist_back(&head)), 3);
    return 1;
}

static int test_removal_anywhere_unlinks(void)
{
    ggfs_dlink head;
    ggfs_dlist_init(&head);
    item it[5];
    for (int i = 0; i < 5; i++) {
        it[i] = (item){i, {NULL, NULL}};
        EXPECT(!ggfs_dlist_linked(&it[i].link));
        ggfs_dlist_push_back(&head, &it[i].link);
        EXPECT(ggfs_dlist_linked(&it[i].link));
    }
    EXPECT(holds(&head, "01234"));
    ggfs_dlist_remove(&it[2].link);
    EXPECT(!ggfs_dlist_linked(&it[2].link));
    EXPECT(holds(&head, "0134"));
    ggfs_dlist_remove(ggfs_dlist_front(&head));
    EXPECT(holds(&head, "134"));
    ggfs_dlist_remove(ggfs_dlist_back(&head));
    EXPECT(holds(&head, "13"));
    ggfs_dlist_push_front(&head, &it[2].link); // a removed link is reusable
    EXPECT(holds(&head, "213"));
    while (ggfs_dlist_front(&head))
        ggfs_dlist_remove(ggfs_dlist_front(&head));
    EXPECT(holds(&head, ""));
    return 1;
}

int main(void)
{
    const int ok = test_pushes_keep_their_order() & test_removal_anywhere_unlinks();
    return ok ? 0 : 1;
}
