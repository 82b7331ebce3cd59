/* The test side of allocation-failure injection (failalloc_hook.h): arm,
 * count, disarm. Only in builds with -DVOXA_FAILALLOC=ON (voxa__failalloc_on
 * returns 0 otherwise and the other calls do nothing). */
#ifndef VOXA_FAILALLOC_H
#define VOXA_FAILALLOC_H

#include <stdint.h>

/* 1 when the library was built with the wrappers. */
int voxa__failalloc_on(void);
/* Start counting from zero; with k > 0 the k-th counted allocation from now
 * (in any thread) returns NULL, once; k = 0 only counts. */
void voxa__failalloc_arm(int64_t k);
/* Allocations counted since the last arm. */
int64_t voxa__failalloc_count(void);
/* 1 if the armed failure has happened since the last arm. */
int voxa__failalloc_fired(void);
/* Call fn (NULL: nothing) in the failing allocation's thread when it fails:
 * a test prints the stack there to find the call site. */
void voxa__failalloc_on_fire(void (*fn)(void));
/* Device buffers allocated through the GPU backends and not yet freed (the
 * armed device calls: GPU allocations, copies, launches and waits count as
 * allocations and fail with VOXA_ENOMEM). */
int64_t voxa__failalloc_device_live(void);

#endif
