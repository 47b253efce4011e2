/*
 * An intrusive doubly linked list: a ggfs_dlink lives inside each element,
 * and a list is a ggfs_dlink sentinel whose next is the front and prev the
 * back. Pushing and removing are O(1) and allocate nothing; an element
 * finds its container with GGFS_CONTAINER_OF. Not thread-safe: the owner's
 * lock guards the list.
 *
 *   head <-> front <-> ... <-> back <-> head
 */
#ifndef GGFS_UTIL_DLIST_H
#define GGFS_UTIL_DLIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ggfs_dlink {
    struct ggfs_dlink *prev, *next; // both NULL while on no list
} ggfs_dlink;

#define GGFS_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* An empty list. */
static inline void ggfs_dlist_init(ggfs_dlink *head)
{
    head->prev = head->next = head;
}

static inline bool ggfs_dlist_empty(const ggfs_dlink *head)
{
    return head->next == head;
}

/* Whether an element's link is on a list. */
static inline bool ggfs_dlist_linked(const ggfs_dlink *link)
{
    return link->next != NULL;
}

static inline void ggfs_dlist_insert_after(ggfs_dlink *at, ggfs_dlink *link)
{
    link->prev = at;
    link->next = at->next;
    at->next->prev = link;
    at->next = link;
}

static inline void ggfs_dlist_push_front(ggfs_dlink *head, ggfs_dlink *link)
{
    ggfs_dlist_insert_after(head, link);
}

static inline void ggfs_dlist_push_back(ggfs_dlink *head, ggfs_dlink *link)
{
    ggfs_dlist_insert_after(head->prev, link);
}

/* Takes a linked element off its list. */
static inline void ggfs_dlist_remove(ggfs_dlink *link)
{
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link->next = NULL;
}

/* The front or back element's link, or NULL when the list is empty. */
static inline ggfs_dlink *ggfs_dlist_front(const ggfs_dlink *head)
{
    return head->next == head ? NULL : head->next;
}

static inline ggfs_dlink *ggfs_dlist_back(const ggfs_dlink *head)
{
    return head->prev == head ? NULL : head->prev;
}

#endif
