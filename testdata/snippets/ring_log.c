#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RING_SIZE 64

struct ring_log {
    char lines[RING_SIZE][128];
    unsigned head;
    unsigned count;
};

static const char *level_name(int level)
{
    switch (level) {
    case 0:
        return "debug";
    case 1:
        return "info";
    default:
        return "error";
    }
}

/*
 * Appends a formatted line, overwriting the oldest one when the ring
 * is full.
 */
void ring_log_printf(struct ring_log *log, int level, const char *fmt, ...)
{
    va_list ap;
    char *slot = log->lines[log->head];
    int used = snprintf(slot, sizeof log->lines[0], "[%s] ", level_name(level));

    va_start(ap, fmt);
    vsnprintf(slot + used, sizeof log->lines[0] - (size_t)used, fmt, ap);
    va_end(ap);
    log->head = (log->head + 1) % RING_SIZE;
    if (log->count < RING_SIZE)
        log->count++;
}

int ring_log_find(const struct ring_log *log, const char *needle)
{
    unsigned i;

    for (i = 0; i < log->count; i++) {
        unsigned at = (log->head + RING_SIZE - log->count + i) % RING_SIZE;
        if (strstr(log->lines[at], needle) != NULL)
            return (int)at;
    }
    return -1;
}
