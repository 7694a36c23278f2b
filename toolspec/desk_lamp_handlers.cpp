// Handlers of the demo device desk-lamp (desk_lamp.yaml): an in-memory RGB lamp with
// a timer and effects; get_state reports what the setters changed.
#include <stdio.h>
#include <string.h>

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

}  // namespace

namespace tools {

mcpgen::Result light_set_rgb(const LightSetRgbArgs& args, mcpgen::Context&) {
  g_lamp.rgb[0] = args.r;
  g_lamp.rgb[1] = args.g;
  g_lamp.rgb[2] = args.b;
  return mcpgen::Result::Bool(true);
}

mcpgen::Result light_set_power(const LightSetPowerArgs& args, mcpgen::Context& ctx) {
  if (g_lamp.on != args.on) {
    ctx.notify("notifications/state_changed", args.on ? "{\"on\":true}" : "{\"on\":false}");
    // The typed event of the spec (sent at once, before this call's reply).
    mcpgen::events::emit_power_changed(args.on, "assistant");
  }
  g_lamp.on = args.on;
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
  return mcpgen::Result::Int(g_lamp.timer_minutes);
}

mcpgen::Result light_set_effect(const LightSetEffectArgs& args, mcpgen::Context& ctx) {
  snprintf(g_lamp.effect, sizeof g_lamp.effect, "%s", args.effect);
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
  return mcpgen::Result::Bool(g_lamp.on);
}

}  // namespace tools
