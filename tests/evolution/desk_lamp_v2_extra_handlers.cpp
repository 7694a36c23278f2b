// The handler of the tool desk_lamp_v2.yaml adds to desk_lamp.yaml; the tests append it to a
// copy of toolspec/desk_lamp_handlers.cpp to build the version-2 simulator.
namespace tools {

mcpgen::Result light_set_brightness(const LightSetBrightnessArgs& args, mcpgen::Context&) {
  return mcpgen::Result::Int(args.percent);
}

}  // namespace tools
