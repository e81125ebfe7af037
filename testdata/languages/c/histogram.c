/* Histograms of response times, in milliseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 16

struct histogram {
    unsigned counts[BUCKETS];
    unsigned total;
    double max_ms;
};

static unsigned bucket_of(double ms)
{
    unsigned b = 0;
    while (ms >= 1.0 && b < BUCKETS - 1) {
        ms /= 2.0;
        b++;
    }
    return b;
}

void histogram_add(struct histogram *h, double ms)
{
    h->counts[bucket_of(ms)]++;
    h->total++;
    if (ms > h->max_ms)
        h->max_ms = ms;
}

int histogram_print(const struct histogram *h, FILE *out, int width)
{
    unsigned peak = 1;
    int lines = 0;
    for (int i = 0; i < BUCKETS; i++) {
        if (h->counts[i] > peak)
            peak = h->counts[i];
    }
    for (int i = 0; i < BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        int bar = (int)((long)h->counts[i] * width / peak);
        fprintf(out, "%6u ms | %-*.*s %u\n", 1u << i, width, bar,
                "################################", h->counts[i]);
        lines++;
    }
    fprintf(out, "total %u, max %.1f ms\n", h->total, h->max_ms);
    return lines;
}

struct histogram *histogram_new(void)
{
    struct histogram *h = calloc(1, sizeof *h);
    if (h == NULL) {
        perror("histogram_new");
        return NULL;
    }
    return h;
}

void histogram_merge(struct histogram *into, const struct histogram *from)
{
    for (int i = 0; i < BUCKETS; i++)
        into->counts[i] += from->counts[i];
    into->total += from->total;
    if (from->max_ms > into->max_ms)
        into->max_ms = from->max_ms;
}
