#include "event_outlet.h"

namespace hostport {

HostEventOutlet::HostEventOutlet() {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  // Recursive: a tool handler emits while the port holds the lock around handle().
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&mu_, &attr);
  pthread_mutexattr_destroy(&attr);
}

void HostEventOutlet::lock() { pthread_mutex_lock(&mu_); }
void HostEventOutlet::unlock() { pthread_mutex_unlock(&mu_); }

mcpgen::EventStatus HostEventOutlet::send_locked(const char* data, size_t len) {
  if (link_ == nullptr) return mcpgen::EventStatus::kNoPeer;
  return link_->send(data, len) ? mcpgen::EventStatus::kSent : mcpgen::EventStatus::kSendFailed;
}

void HostEventOutlet::set_link(mcpgen::Link* link) { link_ = link; }

HostEventOutlet& event_outlet() {
  static HostEventOutlet outlet;
  return outlet;
}

}  // namespace hostport
