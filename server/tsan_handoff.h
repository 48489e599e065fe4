#ifndef MENTAT_SERVER_TSAN_HANDOFF_H_
#define MENTAT_SERVER_TSAN_HANDOFF_H_

// Happens-before edges that ThreadSanitizer cannot see by itself.
//
// A reactor is built on the thread of its handler and then called back
// (OnReadDone, OnWriteDone, OnCancel, OnDone) on gRPC's threads, which got
// the pointer only through libgrpc: its completion queue and executor are
// not instrumented, so TSan sees none of their synchronisation and would
// report what the constructor wrote, or what one callback wrote and the
// next one read, as a race. Instead of suppressing our own frames, we tell
// TSan about the hand-over: HandOffRelease(r) where our code gives the
// reactor to gRPC (the handler returns it, an operation starts, a callback
// returns), HandOffAcquire(r) where gRPC gives it back (a callback starts,
// the last reference is dropped). The address is the gRPC reactor base of
// the object, the same on both sides. Races between our own threads and a
// callback are still reported: they go through our locks and atomics,
// which TSan sees.
//
// One access escapes both: gRPC's completion lambda reads the reactor's
// vtable pointer to call OnWriteDone (or OnReadDone) before our acquire
// inside it runs. HandedToGrpc declares that one word a benign race; the
// rest of the object stays checked.
//
// Outside TSan builds these are empty inline functions.

#if defined(__SANITIZE_THREAD__)
#define MENTAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MENTAT_TSAN 1
#endif
#endif

#ifdef MENTAT_TSAN
#include <sanitizer/tsan_interface.h>
// TSan's dynamic annotation (libtsan exports it; no header declares it).
extern "C" void AnnotateBenignRaceSized(const char* file, int line,
                                        const volatile void* mem,
                                        unsigned long size,
                                        const char* description);
#endif

namespace mentat::server {

inline void HandOffRelease(const void* reactor) {
#ifdef MENTAT_TSAN
  __tsan_release(const_cast<void*>(reactor));
#else
  (void)reactor;
#endif
}

inline void HandOffAcquire(const void* reactor) {
#ifdef MENTAT_TSAN
  __tsan_acquire(const_cast<void*>(reactor));
#else
  (void)reactor;
#endif
}

// Releases `reactor` to gRPC and returns it: `return HandedToGrpc(r);` in a
// service method.
template <typename Reactor>
Reactor* HandedToGrpc(Reactor* reactor) {
#ifdef MENTAT_TSAN
  AnnotateBenignRaceSized(__FILE__, __LINE__, reactor, sizeof(void*),
                          "reactor vtable pointer, read by gRPC's lambdas");
#endif
  HandOffRelease(reactor);
  return reactor;
}

}  // namespace mentat::server

#endif  // MENTAT_SERVER_TSAN_HANDOFF_H_
