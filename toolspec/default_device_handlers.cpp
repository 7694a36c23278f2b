// Handlers of the demo device xiaozhi-sim (default_device.yaml): an in-memory model of
// a speaker with a screen, so every tool has an observable effect in the simulator.
//   set_volume / set_brightness / set_theme change what get_device_status reports;
//   set_theme emits notifications/state_changed when the theme really changes;
//   counter.add accumulates; set_hostname stores the name (and checks its pattern);
//   show_text fails with a tool error for the text "fail".
#include <stdio.h>
#include <string.h>

#include "mcp_tools.h"
#include "mcpgen/text_format.h"

namespace {

struct DeviceState {
  int64_t volume = 70;
  int64_t brightness = 80;
  char theme[8] = "light";
  int64_t battery_level = 87;
  bool charging = false;
  int64_t counter = 0;
  char hostname[33] = "xiaozhi-sim";
  int64_t reboots = 0;
};

DeviceState g_state;

// A 1x1 PNG (the camera's "picture").
const char kSnapshotPng[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg==";

}  // namespace

namespace tools {

mcpgen::Result get_device_status(const GetDeviceStatusArgs&, mcpgen::Context& ctx) {
  mcpgen::JsonWriter& w = ctx.object();
  w.begin_object();
  w.key("audio_speaker");
  w.begin_object();
  w.key("volume");
  w.integer(g_state.volume);
  w.end_object();
  w.key("screen");
  w.begin_object();
  w.key("brightness");
  w.integer(g_state.brightness);
  w.key("theme");
  w.string(g_state.theme);
  w.end_object();
  w.key("battery");
  w.begin_object();
  w.key("level");
  w.integer(g_state.battery_level);
  w.key("charging");
  w.boolean(g_state.charging);
  w.end_object();
  w.end_object();
  return mcpgen::Result::Object();
}

mcpgen::Result audio_speaker_set_volume(const AudioSpeakerSetVolumeArgs& args, mcpgen::Context&) {
  g_state.volume = args.volume;
  return mcpgen::Result::Bool(true);
}

mcpgen::Result screen_set_brightness(const ScreenSetBrightnessArgs& args, mcpgen::Context&) {
  g_state.brightness = args.brightness;
  return mcpgen::Result::Bool(true);
}

mcpgen::Result screen_set_theme(const ScreenSetThemeArgs& args, mcpgen::Context& ctx) {
  if (strcmp(g_state.theme, args.theme) != 0) {
    char params[96];
    snprintf(params, sizeof params,
             "{\"component\":\"screen\",\"oldState\":{\"theme\":\"%s\"},\"newState\":{\"theme\":\"%s\"}}",
             g_state.theme, args.theme);  // enum values: nothing to escape
    snprintf(g_state.theme, sizeof g_state.theme, "%s", args.theme);
    ctx.notify("notifications/state_changed", params);
  }
  return mcpgen::Result::Bool(true);
}

mcpgen::Result reboot(const RebootArgs&, mcpgen::Context&) {
  ++g_state.reboots;
  return mcpgen::Result::None();
}

mcpgen::Result display_show_text(const DisplayShowTextArgs& args, mcpgen::Context& ctx) {
  if (strcmp(args.text, "fail") == 0) {
    return mcpgen::Result::Error("display error: the panel did not acknowledge the update");
  }
  char seconds[32];
  mcpgen::format_double(args.seconds, seconds);
  snprintf(ctx.scratch(), ctx.scratch_size(), "showing \"%s\" for %s s%s", args.text, seconds,
           args.scroll ? " (scrolling)" : "");
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result sensor_read_temperature(const SensorReadTemperatureArgs& args, mcpgen::Context&) {
  const double celsius = 21.5;
  if (strcmp(args.unit, "fahrenheit") == 0) return mcpgen::Result::Number(celsius * 9.0 / 5.0 + 32.0);
  return mcpgen::Result::Number(celsius);
}

mcpgen::Result counter_add(const CounterAddArgs& args, mcpgen::Context&) {
  g_state.counter += args.amount;
  return mcpgen::Result::Int(g_state.counter);
}

mcpgen::Result network_set_hostname(const NetworkSetHostnameArgs& args, mcpgen::Context&) {
  // The spec's pattern ^[a-z0-9-]+$ (the core checks types, ranges and lengths only).
  if (args.hostname[0] == '\0') return mcpgen::Result::Error("hostname must not be empty");
  for (const char* p = args.hostname; *p != '\0'; ++p) {
    bool ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
    if (!ok) return mcpgen::Result::Error("hostname may only contain a-z, 0-9 and '-'");
  }
  snprintf(g_state.hostname, sizeof g_state.hostname, "%s", args.hostname);
  return mcpgen::Result::Text(g_state.hostname);
}

mcpgen::Result camera_snapshot(const CameraSnapshotArgs&, mcpgen::Context&) {
  return mcpgen::Result::Image("image/png", kSnapshotPng);
}

}  // namespace tools
