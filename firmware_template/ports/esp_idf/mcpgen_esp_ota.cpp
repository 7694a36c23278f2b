// Over-the-air updates of the ESP-IDF port (docs/ota.md, "ESP-IDF"): the same checks and
// the same rollback rule as the host simulator (ports/host/ota.cpp), on the chip's two
// OTA partitions.
//
//   self.upgrade_firmware(url, sha256, size, version)
//     esp_https_ota_begin ── the app descriptor (esp_https_ota_get_img_desc): project
//       name = this firmware's, version = the announced one
//     esp_https_ota_perform ── into the passive OTA partition (esp_https_ota refuses an
//       image of another chip as the first bytes arrive)
//     read back what was written: its size, its SHA-256 against the argument, the image
//       header's chip_id, the MCPGEN-OTA-IMAGE marker (device name, version, spec)
//     esp_https_ota_finish ── ESP-IDF's own image check, then the boot partition
//     reply, reboot (500 ms later)
//
// With CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE (sdkconfig.defaults of an ota spec) the
// bootloader starts the new image in state PENDING_VERIFY. It marks itself valid only
// once the backend completed an MCP session with it (initialize, then one more request
// answered); until then a deadline runs (CONFIG_MCPGEN_OTA_DEADLINE_S) after which it
// rolls back and reboots. A crash or reset before that makes the bootloader return to
// the previous image by itself.
//
// Why the read-back: esp_https_ota writes the stream straight to flash and gives no hook
// on the plain bytes (decrypt_cb is for pre-encrypted images), so the SHA-256 the caller
// named is computed over what is in the partition, which also covers the flash write.
#include "mcpgen_esp_ota.h"

#if defined(MCPGEN_SPEC_OTA)

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "esp_app_desc.h"
#include "esp_app_format.h"
#include "esp_crt_bundle.h"
#include "esp_http_client.h"
#include "esp_https_ota.h"
#include "esp_log.h"
#include "esp_ota_ops.h"
#include "esp_partition.h"
#include "esp_system.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/semphr.h"
#include "freertos/task.h"
#include "mbedtls/sha256.h"
#include "mcpgen/json_reader.h"
#include "mcpgen/ota_marker.h"

// What an image says about itself (the backend's mcpgen.runtime.ota.read_image reads it
// from firmware.bin; the update handler finds it in a downloaded image).
extern "C" __attribute__((used)) const char mcpgen_ota_image_marker[] =
    MCPGEN_OTA_IMAGE_MARKER(MCPGEN_SPEC_DEVICE_NAME, MCPGEN_SPEC_DEVICE_VERSION, MCPGEN_SPEC_FINGERPRINT);

namespace {

const char* const kTag = "mcpgen-ota";
constexpr size_t kChunk = 4096;
constexpr size_t kCarry = 256;  // longer than any marker: one split across two chunks is found whole

// ------------------------------------------------------------------ rollback

bool g_pending = false;  // this image runs in PENDING_VERIFY
bool g_initialized = false;  // the backend's initialize was answered on this boot
bool g_watch_next = false;  // the message being handled is the request after initialize
esp_timer_handle_t g_deadline = nullptr;

void on_deadline(void*) {
  ESP_LOGE(kTag, "no MCP session with the backend within %d s: rolling back to the previous image",
           CONFIG_MCPGEN_OTA_DEADLINE_S);
  esp_ota_mark_app_invalid_rollback_and_reboot();  // returns only when there is nothing to return to
  ESP_LOGE(kTag, "no previous image to roll back to: staying on this one");
}

void mark_valid() {
  if (!g_pending) return;
  g_pending = false;
  if (g_deadline != nullptr) esp_timer_stop(g_deadline);
  esp_err_t err = esp_ota_mark_app_valid_cancel_rollback();
  if (err == ESP_OK) {
    ESP_LOGI(kTag, "the backend completed an MCP session: this image is now the valid one");
  } else {
    ESP_LOGE(kTag, "marking this image valid failed: %s", esp_err_to_name(err));
  }
}

// ------------------------------------------------------------------ the update

SemaphoreHandle_t g_busy_mu = nullptr;
bool g_busy = false;  // an update runs, or one finished and the reboot is on its way

struct Job {
  const McpgenBuiltinUpgradeFirmwareArgs* args;
  char* msg;  // the reply text or the error (the handler's scratch buffer)
  size_t msg_cap;
  bool ok;
  TaskHandle_t waiter;
};

bool failf(Job* job, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(job->msg, job->msg_cap, fmt, ap);
  va_end(ap);
  ESP_LOGE(kTag, "update refused: %s", job->msg);
  return false;
}

using Marker = mcpgen_ota::Marker;

// Reads the first `size` bytes of the partition back: their SHA-256 (hex) and the marker.
bool read_back(Job* job, const esp_partition_t* part, size_t size, char hex[65], Marker* m, bool* found) {
  char* buf = static_cast<char*>(malloc(kCarry + kChunk));
  if (buf == nullptr) return failf(job, "out of memory for the %u-byte read-back buffer", unsigned(kCarry + kChunk));
  mbedtls_sha256_context sha;
  mbedtls_sha256_init(&sha);
  mbedtls_sha256_starts(&sha, 0);
  size_t carry = 0;
  *found = false;
  bool ok = true;
  for (size_t off = 0; off < size && ok;) {
    const size_t n = size - off < kChunk ? size - off : kChunk;
    esp_err_t err = esp_partition_read(part, off, buf + carry, n);
    if (err != ESP_OK) {
      ok = failf(job, "reading the new image back from partition %s failed at %u: %s", part->label, unsigned(off),
                 esp_err_to_name(err));
      break;
    }
    mbedtls_sha256_update(&sha, reinterpret_cast<const unsigned char*>(buf + carry), n);
    if (!*found) *found = mcpgen_ota::find_marker(buf, carry + n, m);
    const size_t have = carry + n;
    carry = have < kCarry ? have : kCarry;
    memmove(buf, buf + have - carry, carry);
    off += n;
  }
  unsigned char digest[32];
  mbedtls_sha256_finish(&sha, digest);
  mbedtls_sha256_free(&sha);
  free(buf);
  for (int k = 0; k < 32; ++k) snprintf(hex + 2 * k, 3, "%02x", digest[k]);
  return ok;
}

bool download_and_verify(Job* job, esp_https_ota_handle_t ota) {
  const auto& a = *job->args;
  const esp_app_desc_t* running = esp_app_get_description();
  esp_app_desc_t desc;
  esp_err_t err = esp_https_ota_get_img_desc(ota, &desc);
  if (err != ESP_OK) return failf(job, "no app descriptor at the start of %s: %s", a.url, esp_err_to_name(err));
  if (strncmp(desc.project_name, running->project_name, sizeof desc.project_name) != 0) {
    return failf(job, "the image is of project '%.32s', this device runs '%.32s' (%s)", desc.project_name,
                 running->project_name, MCPGEN_SPEC_DEVICE_NAME);
  }
  if (strncmp(desc.version, a.version, sizeof desc.version) != 0) {
    return failf(job, "the image carries version %.32s, the request announced %s", desc.version, a.version);
  }
  char image_version[sizeof desc.version + 1];
  snprintf(image_version, sizeof image_version, "%.32s", desc.version);
  if (mcpgen_ota::compare_versions(image_version, MCPGEN_SPEC_DEVICE_VERSION) < 0 && !a.allow_downgrade) {
    return failf(job,
                 "downgrade refused: the image carries version %s, this device runs %s (roll out with "
                 "--allow-downgrade to install an older version)",
                 image_version, MCPGEN_SPEC_DEVICE_VERSION);
  }
  const int announced = esp_https_ota_get_image_size(ota);
  if (announced > 0 && announced != a.size) {
    return failf(job, "the server sends %d bytes, the request declared %lld", announced,
                 static_cast<long long>(a.size));
  }
  for (;;) {
    err = esp_https_ota_perform(ota);
    if (esp_https_ota_get_image_len_read(ota) > a.size) {
      return failf(job, "the image at %s is larger than the declared size %lld bytes", a.url,
                   static_cast<long long>(a.size));
    }
    if (err != ESP_ERR_HTTPS_OTA_IN_PROGRESS) break;
  }
  const int got = esp_https_ota_get_image_len_read(ota);
#if defined(CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK)
  if (err == ESP_ERR_OTA_SMALL_SEC_VER) {  // anti-rollback: no --allow-downgrade gets past the eFuse
    return failf(job, "downgrade refused: the image's secure_version is below this chip's (eFuse) secure version");
  }
#endif
  if (err == ESP_ERR_INVALID_VERSION) {
    return failf(job, "the image at %s is for another chip (or chip revision) than this %s", a.url, CONFIG_IDF_TARGET);
  }
  if (err != ESP_OK) {
    return failf(job, "download from %s failed after %d bytes: %s", a.url, got, esp_err_to_name(err));
  }
  if (!esp_https_ota_is_complete_data_received(ota) || got != a.size) {
    return failf(job, "truncated download: got %d of %lld bytes from %s", got, static_cast<long long>(a.size), a.url);
  }
  const esp_partition_t* passive = esp_ota_get_next_update_partition(nullptr);
  if (passive == nullptr) return failf(job, "no passive OTA partition (is the partition table the two-slot one?)");
  char hex[65];
  Marker m;
  bool found = false;
  if (!read_back(job, passive, static_cast<size_t>(got), hex, &m, &found)) return false;
  if (strcasecmp(hex, a.sha256) != 0) {
    return failf(job, "SHA-256 mismatch: the image hashes to %s, expected %s", hex, a.sha256);
  }
  esp_image_header_t header;
  err = esp_partition_read(passive, 0, &header, sizeof header);
  if (err != ESP_OK || header.magic != ESP_IMAGE_HEADER_MAGIC) {
    return failf(job, "not an ESP-IDF app image (no image header magic at the start)");
  }
  if (header.chip_id != CONFIG_IDF_FIRMWARE_CHIP_ID) {
    return failf(job, "the image is for chip id %d, this %s is chip id %d", static_cast<int>(header.chip_id),
                 CONFIG_IDF_TARGET, CONFIG_IDF_FIRMWARE_CHIP_ID);
  }
  if (!found) return failf(job, "not an mcpgen image: no MCPGEN-OTA-IMAGE marker (build it with device.ota: true)");
  if (strcmp(m.name, MCPGEN_SPEC_DEVICE_NAME) != 0) {
    return failf(job, "the image is for device '%s' (spec %s), this device is '%s'", m.name, m.fingerprint,
                 MCPGEN_SPEC_DEVICE_NAME);
  }
  if (strcmp(m.version, a.version) != 0) {
    return failf(job, "the image carries version %s, the request announced %s", m.version, a.version);
  }
  snprintf(job->msg, job->msg_cap, "installed %s %s (spec %s) into partition %s; rebooting", m.name, m.version,
           m.fingerprint, passive->label);
  return true;
}

// The download runs on its own task: TLS and the HTTP client need more stack than the
// MCP worker keeps for handlers (CONFIG_MCPGEN_OTA_TASK_STACK_SIZE).
void update_task(void* arg) {
  Job* job = static_cast<Job*>(arg);
  esp_http_client_config_t http;
  memset(&http, 0, sizeof http);
  http.url = job->args->url;
  http.timeout_ms = 10000;  // connect and every read: a stalled server is an error, not a hang
  http.crt_bundle_attach = esp_crt_bundle_attach;
  http.keep_alive_enable = true;
  esp_https_ota_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.http_config = &http;
  esp_https_ota_handle_t ota = nullptr;
  ESP_LOGI(kTag, "downloading %s (%lld bytes, version %s)", job->args->url, static_cast<long long>(job->args->size),
           job->args->version);
  esp_err_t err = esp_https_ota_begin(&cfg, &ota);
  if (err != ESP_OK) {
    job->ok = failf(job, "cannot download %s: %s", job->args->url, esp_err_to_name(err));
  } else if (!download_and_verify(job, ota)) {
    esp_https_ota_abort(ota);  // the running image and the boot partition stay as they were
    job->ok = false;
  } else if ((err = esp_https_ota_finish(ota)) != ESP_OK) {
#if defined(CONFIG_SECURE_SIGNED_ON_UPDATE)
    // With signed apps (device.ota.public_key) esp_ota_end verifies the ECDSA signature
    // block: an unsigned, wrongly signed or cut-off image ends here, nothing installed.
    if (err == ESP_ERR_OTA_VALIDATE_FAILED || err == ESP_ERR_IMAGE_INVALID) {
      job->ok = failf(job,
                      "bad signature: ESP-IDF's check of the signed app failed (%s): unsigned, signed with "
                      "another key, or a cut signature block",
                      esp_err_to_name(err));
    } else {
      job->ok = failf(job, "the new image did not pass ESP-IDF's image check: %s", esp_err_to_name(err));
    }
#else
    job->ok = failf(job, "the new image did not pass ESP-IDF's image check: %s", esp_err_to_name(err));
#endif
  } else {
    job->ok = true;
  }
  xTaskNotifyGive(job->waiter);
  vTaskDelete(nullptr);
}

void restart_now(void*) { esp_restart(); }

void set_busy(bool busy) {
  xSemaphoreTake(g_busy_mu, portMAX_DELAY);
  g_busy = busy;
  xSemaphoreGive(g_busy_mu);
}

}  // namespace

namespace mcpgen_esp {

void ota_boot() {
  g_busy_mu = xSemaphoreCreateMutex();
  ESP_LOGI(kTag, "%s", mcpgen_ota_image_marker);
  esp_ota_img_states_t state;
  const esp_partition_t* running = esp_ota_get_running_partition();
  if (running == nullptr || esp_ota_get_state_partition(running, &state) != ESP_OK ||
      state != ESP_OTA_IMG_PENDING_VERIFY) {
    return;
  }
  g_pending = true;
  ESP_LOGW(kTag, "new image in partition %s: valid once the backend completes an MCP session within %d s",
           running->label, CONFIG_MCPGEN_OTA_DEADLINE_S);
  esp_timer_create_args_t t;
  memset(&t, 0, sizeof t);
  t.callback = on_deadline;
  t.name = "mcpgen-ota-deadline";
  if (esp_timer_create(&t, &g_deadline) == ESP_OK) {
    esp_timer_start_once(g_deadline, static_cast<uint64_t>(CONFIG_MCPGEN_OTA_DEADLINE_S) * 1000000ULL);
  }
}

void ota_observe(const char* msg, size_t len) {
  g_watch_next = false;
  if (!g_pending) return;
  mcpgen::json::Message m;
  const char* error = nullptr;
  // read_message only reads (the core calls it on const text the same way).
  if (!mcpgen::json::read_message(const_cast<char*>(msg), len, &m, &error)) return;
  const mcpgen::json::Rpc* rpc = nullptr;
  if (mcpgen::json::string_equals(m.top.type, "mcp")) {
    rpc = &m.inner;
  } else if (!m.top.type.valid()) {
    rpc = m.inner.id.valid() ? &m.inner : &m.top;
  }
  if (rpc == nullptr || !rpc->id.valid() || !rpc->method.is(mcpgen::json::Type::kString)) return;
  if (mcpgen::json::string_equals(rpc->method, "initialize")) {
    g_initialized = true;  // answered below; the next request completes the session
  } else if (g_initialized) {
    g_watch_next = true;
  }
}

void ota_replied(bool sent) {
  if (g_watch_next && sent) mark_valid();
  g_watch_next = false;
}

}  // namespace mcpgen_esp

namespace tools {

mcpgen::Result mcpgen_builtin_upgrade_firmware(const McpgenBuiltinUpgradeFirmwareArgs& args, mcpgen::Context& ctx) {
  if (mcpgen_ota::url_has_control(args.url)) {  // before any request: CR/LF would inject headers
    ESP_LOGE(kTag, "update refused: unsafe url (a control character)");
    return mcpgen::Result::Error(
        "unsafe url: it holds a control character (CR, LF, NUL or another below 0x20, or 0x7f); nothing was "
        "requested");
  }
  xSemaphoreTake(g_busy_mu, portMAX_DELAY);
  const bool busy = g_busy;
  g_busy = true;
  xSemaphoreGive(g_busy_mu);
  if (busy) return mcpgen::Result::Error("an update is already in progress: wait for the device to reboot");
  Job job = {&args, ctx.scratch(), ctx.scratch_size(), false, xTaskGetCurrentTaskHandle()};
  if (xTaskCreate(update_task, "mcpgen-ota", CONFIG_MCPGEN_OTA_TASK_STACK_SIZE, &job, 5, nullptr) != pdPASS) {
    set_busy(false);
    return mcpgen::Result::Error("cannot start the update task (out of memory)");
  }
  ulTaskNotifyTake(pdTRUE, portMAX_DELAY);  // every step of the task is bounded by its timeouts
  if (!job.ok) {
    set_busy(false);
    return mcpgen::Result::Error(ctx.scratch());
  }
  ESP_LOGI(kTag, "%s", ctx.scratch());
  esp_timer_create_args_t t;
  memset(&t, 0, sizeof t);
  t.callback = restart_now;
  t.name = "mcpgen-ota-reboot";
  esp_timer_handle_t reboot = nullptr;
  if (esp_timer_create(&t, &reboot) != ESP_OK || esp_timer_start_once(reboot, 500 * 1000) != ESP_OK) {
    restart_now(nullptr);  // no timer: reboot without the reply rather than stay on the old image
  }
  return mcpgen::Result::Text(ctx.scratch());  // the reply leaves before the timer fires
}

}  // namespace tools

#endif  // MCPGEN_SPEC_OTA
