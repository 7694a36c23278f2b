// Handlers of the demo device desk-lamp (desk_lamp.yaml): an in-memory RGB lamp with
// a timer and effects; get_state reports what the setters changed.
#include <stdio.h>
#include <string.h>
#if defined(__linux__) || defined(__APPLE__) || defined(ESP_PLATFORM)
#include <unistd.h>
#endif

#include "mcp_tools.h"
#include "mcpgen/text_format.h"

namespace {

struct LampState {
  bool on = false;
  int64_t rgb[3] = {255, 255, 255};
  int64_t timer_minutes = 0;
  char effect[16] = "none";
};

LampState g_lamp;

// Every handler that writes g_lamp calls this: clients that subscribed to the status
// resource (lamp://status) hear that it changed, sent at once, before the call's reply.
void status_changed() { mcpgen::resource_updated("lamp://status"); }

// The fade's wait between two steps. The QEMU images have no clock here: they fade at once.
void pause_ms(int64_t ms) {
#if defined(__linux__) || defined(__APPLE__) || defined(ESP_PLATFORM)
  for (; ms > 0; ms -= 100) usleep(static_cast<useconds_t>((ms < 100 ? ms : 100) * 1000));
#else
  (void)ms;
#endif
}

}  // namespace

namespace tools {

mcpgen::Result light_set_rgb(const LightSetRgbArgs& args, mcpgen::Context&) {
  g_lamp.rgb[0] = args.r;
  g_lamp.rgb[1] = args.g;
  g_lamp.rgb[2] = args.b;
  status_changed();
  return mcpgen::Result::Bool(true);
}

mcpgen::Result light_set_power(const LightSetPowerArgs& args, mcpgen::Context& ctx) {
  if (g_lamp.on != args.on) {
    ctx.notify("notifications/state_changed", args.on ? "{\"on\":true}" : "{\"on\":false}");
    // The typed event of the spec (sent at once, before this call's reply).
    mcpgen::events::emit_power_changed(args.on, "assistant");
  }
  g_lamp.on = args.on;
  status_changed();
  return mcpgen::Result::Bool(true);
}

mcpgen::Result light_get_state(const LightGetStateArgs&, mcpgen::Context& ctx) {
  mcpgen::JsonWriter& w = ctx.object();
  w.begin_object();
  w.key("on");
  w.boolean(g_lamp.on);
  w.key("rgb");
  w.begin_array();
  for (int64_t c : g_lamp.rgb) w.integer(c);
  w.end_array();
  w.key("timer_minutes");
  w.integer(g_lamp.timer_minutes);
  w.end_object();
  return mcpgen::Result::Object();
}

mcpgen::Result timer_set(const TimerSetArgs& args, mcpgen::Context&) {
  g_lamp.timer_minutes = args.minutes;
  status_changed();
  return mcpgen::Result::Int(g_lamp.timer_minutes);
}

mcpgen::Result light_set_effect(const LightSetEffectArgs& args, mcpgen::Context& ctx) {
  snprintf(g_lamp.effect, sizeof g_lamp.effect, "%s", args.effect);
  status_changed();
  char speed[32];
  mcpgen::format_double(args.speed, speed);
  snprintf(ctx.scratch(), ctx.scratch_size(), "effect %s at speed %s", g_lamp.effect, speed);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result button_press(const ButtonPressArgs& args, mcpgen::Context&) {
  // What the button's interrupt task would do on a real lamp: toggle, then report.
  // Events go out through the port's send path whether or not a peer listens.
  for (int64_t i = 0; i < args.count; ++i) g_lamp.on = !g_lamp.on;
  mcpgen::events::emit_button_pressed(args.count);
  if (args.count % 2 == 1) mcpgen::events::emit_power_changed(g_lamp.on, "button");
  status_changed();
  return mcpgen::Result::Bool(g_lamp.on);
}

// A slow fade in kSteps steps, each reported with ctx.progress (sent at once, only when the
// caller passed a progressToken; otherwise progress() returns false and sends nothing).
mcpgen::Result light_fade(const LightFadeArgs& args, mcpgen::Context& ctx) {
  constexpr int kSteps = 10;
  const int64_t from[3] = {g_lamp.rgb[0], g_lamp.rgb[1], g_lamp.rgb[2]};
  const int64_t to[3] = {args.r, args.g, args.b};
  const int64_t step_ms = static_cast<int64_t>(args.seconds * 1000.0 / kSteps);
  char message[48];
  for (int step = 1; step <= kSteps; ++step) {
    pause_ms(step_ms);
    for (int c = 0; c < 3; ++c) g_lamp.rgb[c] = from[c] + (to[c] - from[c]) * step / kSteps;
    snprintf(message, sizeof message, "rgb %d,%d,%d", static_cast<int>(g_lamp.rgb[0]), static_cast<int>(g_lamp.rgb[1]),
             static_cast<int>(g_lamp.rgb[2]));
    ctx.progress(step, kSteps, message);
  }
  status_changed();
  return mcpgen::Result::Bool(true);
}

mcpgen::Result lamp_reset(const LampResetArgs& args, mcpgen::Context&) {
  // The spec asks the person for `scope` and a confirmation (from_human, confirm): the
  // bridge and the console ask before the call is sent; here it is an ordinary argument.
  g_lamp.on = false;
  for (int64_t& c : g_lamp.rgb) c = 255;
  if (strcmp(args.scope, "everything") == 0) {
    g_lamp.timer_minutes = 0;
    snprintf(g_lamp.effect, sizeof g_lamp.effect, "%s", "none");
  }
  status_changed();
  return mcpgen::Result::Bool(true);
}

}  // namespace tools

// Rich results: the chime (audio) and the snapshot (text, the icon, the status resource).
namespace {

// An 8x8 PNG: a warm yellow disc on dark grey (the icon resource, and the snapshot's image).
const uint8_t kIcon[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
    0x00, 0x08, 0x00, 0x00, 0x00, 0x08, 0x08, 0x02, 0x00, 0x00, 0x00, 0x4b, 0x6d, 0x29, 0xdc, 0x00, 0x00, 0x00,
    0x1f, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x90, 0xc3, 0x01, 0x18, 0x20, 0xd4, 0xff, 0x13, 0x1a, 0x70,
    0x84, 0x90, 0x40, 0x16, 0x85, 0xcb, 0x51, 0x59, 0x02, 0xa7, 0xe5, 0x58, 0x01, 0x00, 0xad, 0xcc, 0x49, 0x21,
    0xf3, 0xef, 0xab, 0x21, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

// The chime: up to three rising square-wave notes, 8 kHz 8-bit mono PCM in a WAV file,
// synthesized into this static buffer (the core base64-encodes it straight into the reply).
constexpr uint32_t kRate = 8000;
constexpr uint32_t kNoteSamples = kRate / 25;  // 40 ms a note
uint8_t g_chime[44 + 3 * kNoteSamples];

void put_le(uint8_t* p, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

size_t synthesize_chime(int64_t notes) {
  static const uint32_t kHalfPeriod[] = {9, 7, 6};  // samples: about 444, 571 and 667 Hz
  uint32_t samples = static_cast<uint32_t>(notes) * kNoteSamples;
  uint8_t* h = g_chime;
  memcpy(h, "RIFF", 4);
  put_le(h + 4, 36 + samples, 4);
  memcpy(h + 8, "WAVEfmt ", 8);
  put_le(h + 16, 16, 4);  // fmt chunk size
  put_le(h + 20, 1, 2);  // PCM
  put_le(h + 22, 1, 2);  // mono
  put_le(h + 24, kRate, 4);
  put_le(h + 28, kRate, 4);  // bytes per second
  put_le(h + 32, 1, 2);  // block align
  put_le(h + 34, 8, 2);  // bits per sample
  memcpy(h + 36, "data", 4);
  put_le(h + 40, samples, 4);
  for (uint32_t i = 0; i < samples; ++i) {
    uint32_t note = i / kNoteSamples;
    bool high = (i / kHalfPeriod[note]) % 2 == 0;
    uint32_t fade = kNoteSamples - i % kNoteSamples;  // each note fades out
    uint32_t amplitude = 96 * fade / kNoteSamples;
    h[44 + i] = static_cast<uint8_t>(high ? 128 + amplitude : 128 - amplitude);
  }
  return 44 + samples;
}

}  // namespace

namespace tools {

mcpgen::Result lamp_chime(const LampChimeArgs& args, mcpgen::Context& ctx) {
  size_t size = synthesize_chime(args.notes);
  return mcpgen::Result::Audio(ctx, "audio/wav", g_chime, size);
}

mcpgen::Result light_snapshot(const LightSnapshotArgs&, mcpgen::Context& ctx) {
  char rgb[3][21];
  for (int i = 0; i < 3; ++i) mcpgen::format_int64(g_lamp.rgb[i], rgb[i]);
  // Written first: the status resource below reuses the scratch buffer when it is read.
  snprintf(ctx.scratch(), ctx.scratch_size(), "The lamp is %s, colour (%s, %s, %s), effect %s.",
           g_lamp.on ? "on" : "off", rgb[0], rgb[1], rgb[2], g_lamp.effect);
  ctx.items().text(ctx.scratch()).image("image/png", kIcon, sizeof kIcon).resource("lamp://status");
  return mcpgen::Result::Items(ctx);
}

}  // namespace tools

namespace resources {

mcpgen::ReadStatus read_status(mcpgen::ResourceWriter& out, mcpgen::Context& ctx) {
  char rgb[3][21];
  for (int i = 0; i < 3; ++i) mcpgen::format_int64(g_lamp.rgb[i], rgb[i]);
  char timer[21];
  mcpgen::format_int64(g_lamp.timer_minutes, timer);
  snprintf(ctx.scratch(), ctx.scratch_size(), "{\"on\":%s,\"rgb\":[%s,%s,%s],\"timer_minutes\":%s,\"effect\":\"%s\"}",
           g_lamp.on ? "true" : "false", rgb[0], rgb[1], rgb[2], timer, g_lamp.effect);
  out.text(ctx.scratch());
  return mcpgen::ReadStatus::kOk;
}

mcpgen::ReadStatus read_icon(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.bytes(kIcon, sizeof kIcon);
  return mcpgen::ReadStatus::kOk;
}

mcpgen::ReadStatus read_effect(const ResourceArgs_effect& args, mcpgen::ResourceWriter& out, mcpgen::Context&) {
  static const char* const kWords[][2] = {{"none", "steady light"},
                                          {"breathe", "slow fade in and out"},
                                          {"rainbow", "colours cycling around the wheel"},
                                          {"candle", "warm flicker"}};
  for (const auto& w : kWords) {
    if (strcmp(w[0], args.name) == 0) {
      out.text(args.name);
      out.text(": ");
      out.text(w[1]);
      return mcpgen::ReadStatus::kOk;
    }
  }
  return mcpgen::ReadStatus::kNotFound;
}

mcpgen::ReadStatus read_pattern(const ResourceArgs_pattern& args, mcpgen::ResourceWriter& out, mcpgen::Context&) {
  // Written in odd-sized chunks so base64 groups span calls.
  uint8_t chunk[7];
  for (int64_t i = 0; i < args.length;) {
    size_t n = 0;
    for (; n < sizeof chunk && i < args.length; ++n, ++i) chunk[n] = static_cast<uint8_t>(i & 0xFF);
    out.bytes(chunk, n);
  }
  return mcpgen::ReadStatus::kOk;
}

}  // namespace resources
