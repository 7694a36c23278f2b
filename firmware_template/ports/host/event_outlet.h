// The host simulator's way out for spec events (mcpgen/events.h): one recursive mutex
// around every send of the process (replies, hello, events) and around the core's
// request handling, and the Link of the connection that is up now. Any thread may call
// the generated mcpgen::events::emit_<name>() once main() installed the outlet.
#pragma once

#include <pthread.h>

#include "mcpgen/events.h"
#include "mcpgen/session.h"

namespace hostport {

class HostEventOutlet : public mcpgen::EventOutlet {
 public:
  HostEventOutlet();
  void lock() override;
  void unlock() override;
  mcpgen::EventStatus send_locked(const char* data, size_t len) override;
  // The connection's link (nullptr: none; events then report kNoPeer).
  void set_link(mcpgen::Link* link);

 private:
  pthread_mutex_t mu_;
  mcpgen::Link* link_ = nullptr;
};

// The process's outlet.
HostEventOutlet& event_outlet();

// Holds the outlet's lock for a scope (around Session calls).
class SendLock {
 public:
  SendLock() { event_outlet().lock(); }
  ~SendLock() { event_outlet().unlock(); }
  SendLock(const SendLock&) = delete;
  SendLock& operator=(const SendLock&) = delete;
};

// Makes `link` the events' way out for a scope (one connection).
class EventLinkScope {
 public:
  explicit EventLinkScope(mcpgen::Link& link) {
    SendLock l;
    event_outlet().set_link(&link);
  }
  ~EventLinkScope() {
    SendLock l;
    event_outlet().set_link(nullptr);
  }
  EventLinkScope(const EventLinkScope&) = delete;
  EventLinkScope& operator=(const EventLinkScope&) = delete;
};

}  // namespace hostport
