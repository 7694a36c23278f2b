// Over-the-air updates of the host simulator (docs/ota.md): the same state machine as
// the ESP32's two OTA partitions, on files. --ota-dir DIR holds two slots (slot-a,
// slot-b: simulator executables) and a state file (active slot, pending-verify flag,
// boot attempts). The process started with --ota-dir is the supervisor (the
// "bootloader"): it runs the active slot as a child with the same arguments, reboots
// into the other slot after an update, and rolls back when a new image exits before,
// or does not reach the backend within --ota-deadline-ms of booting.
#pragma once

namespace hostport {

// Consumes --ota-dir DIR, --ota-deadline-ms MS, --ota-ca CA.pem (the CA https:// image
// servers are verified against) and the internal --ota-child at argv[*i]; false when
// argv[*i] is none of them.
bool parse_ota_arg(int argc, char** argv, int* i);

// True when this process is the supervisor (--ota-dir given, not --ota-child).
bool ota_supervisor_wanted();

// The supervisor loop: runs the active slot until it exits for good; returns its exit code.
int ota_supervise(int argc, char** argv);

// The session with the backend is up: a pending new image is now the valid one.
void ota_mark_valid();

}  // namespace hostport
