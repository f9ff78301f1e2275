/*
 * Pointer chasing: a linked list of nodes allocated one by one with
 * malloc and linked in a shuffled order, walked several times. Each visit
 * reads the link and the key (16 bytes) of a 64-byte node, and the
 * allocator's headers make nodes straddle cache lines, so most of every
 * line loaded is wasted. For contrast, the same keys summed from a plain
 * array use every byte they load.
 */
#include <stdio.h>
#include <stdlib.h>

#define NODES 8192
/* Walks over the list; benches/compare sets more. */
#ifndef WALKS
#define WALKS 4
#endif

struct node {
    struct node *next;
    long key;
    char payload[48];
};

static unsigned long seed = 12345;

static unsigned long next_random(void)
{
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    return seed >> 33;
}

__attribute__((noinline)) static struct node *build_list(struct node **nodes)
{
    for (long i = 0; i < NODES; i++) {
        nodes[i] = malloc(sizeof(struct node));
        nodes[i]->key = i;
    }
    /* Fisher-Yates shuffle of the link order. */
    for (long i = NODES - 1; i > 0; i--) {
        long j = (long)(next_random() % (unsigned long)(i + 1));
        struct node *t = nodes[i];
        nodes[i] = nodes[j];
        nodes[j] = t;
    }
    for (long i = 0; i + 1 < NODES; i++)
        nodes[i]->next = nodes[i + 1];
    nodes[NODES - 1]->next = NULL;
    return nodes[0];
}

__attribute__((noinline)) static long walk_list(const struct node *head)
{
    long sum = 0;
    for (const struct node *n = head; n; n = n->next)
        sum += n->key;
    return sum;
}

__attribute__((noinline)) static long sum_array(const long *keys)
{
    long sum = 0;
    for (long i = 0; i < NODES; i++)
        sum += keys[i];
    return sum;
}

int main(void)
{
    static struct node *nodes[NODES];
    static long keys[NODES];
    struct node *head = build_list(nodes);
    long total = 0;
    for (int walk = 0; walk < WALKS; walk++)
        total += walk_list(head);
    for (long i = 0; i < NODES; i++)
        keys[i] = i;
    for (int walk = 0; walk < WALKS; walk++)
        total += sum_array(keys);
    for (long i = 0; i < NODES; i++)
        free(nodes[i]);
    printf("total %ld\n", total);
    return 0;
}
