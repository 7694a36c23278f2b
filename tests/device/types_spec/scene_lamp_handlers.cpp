// Handlers of scene_lamp.yaml: each echoes what the core decoded into its structs.
#include <stdio.h>

#include "mcp_tools.h"

namespace tools {

mcpgen::Result light_set_scene(const LightSetSceneArgs& args, mcpgen::Context& ctx) {
  const Scene& s = args.scene;
  char* out = ctx.scratch();
  snprintf(out, ctx.scratch_size(), "%s %s %lld %lld %lld %.1f", s.name, s.mood, static_cast<long long>(s.color.r),
           static_cast<long long>(s.color.g), static_cast<long long>(s.color.b), args.fade);
  return mcpgen::Result::Text(out);
}

mcpgen::Result light_set_power(const LightSetPowerArgs& args, mcpgen::Context&) {
  return mcpgen::Result::Bool(args.on);
}

}  // namespace tools
