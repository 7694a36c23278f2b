// Handlers of the conformance fixture (conformance_device.yaml): the answers the official
// MCP conformance suite's server scenarios expect, from a generated device.
#include <stdio.h>
#include <string.h>

#include "mcp_tools.h"

namespace {

// A 1x1 PNG (one green pixel), base64-encoded.
const char kPixelPng[] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

}  // namespace

namespace tools {

mcpgen::Result test_simple_text(const TestSimpleTextArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("This is a simple text response for testing.");
}

mcpgen::Result test_image_content(const TestImageContentArgs&, mcpgen::Context&) {
  return mcpgen::Result::Image("image/png", kPixelPng);
}

mcpgen::Result test_audio_content(const TestAudioContentArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("audio results are not in the spec format yet");
}

mcpgen::Result test_embedded_resource(const TestEmbeddedResourceArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("This is an embedded resource content.");
}

mcpgen::Result test_multiple_content_types(const TestMultipleContentTypesArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("Multiple content types test:");
}

mcpgen::Result test_tool_with_logging(const TestToolWithLoggingArgs&, mcpgen::Context&) {
  // Each event goes out at once; the bridge relays device events as log messages.
  mcpgen::events::emit_log_line("Tool execution started");
  mcpgen::events::emit_log_line("Tool processing data");
  mcpgen::events::emit_log_line("Tool execution completed");
  return mcpgen::Result::Text("Tool with logging executed successfully");
}

mcpgen::Result test_error_handling(const TestErrorHandlingArgs&, mcpgen::Context&) {
  return mcpgen::Result::Error("This tool intentionally returns an error for testing");
}

mcpgen::Result test_tool_with_progress(const TestToolWithProgressArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("Tool with progress executed successfully");
}

mcpgen::Result test_sampling(const TestSamplingArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "no sampling from a device; prompt was: %s", args.prompt);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result test_elicitation(const TestElicitationArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "no elicitation yet; message was: %s", args.message);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result test_elicitation_sep1034_defaults(const TestElicitationSep1034DefaultsArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("no elicitation yet");
}

mcpgen::Result test_elicitation_sep1330_enums(const TestElicitationSep1330EnumsArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("no elicitation yet");
}

mcpgen::Result json_schema_2020_12_tool(const JsonSchema202012ToolArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "name: %s", args.name);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result test_reconnection(const TestReconnectionArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("Reconnection test completed successfully");
}

}  // namespace tools

namespace resources {

mcpgen::ReadStatus read_static_text(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.text("This is the content of the static text resource.");
  return mcpgen::ReadStatus::kOk;
}

mcpgen::ReadStatus read_static_binary(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  static const uint8_t kPixel[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
      0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
      0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9,
      0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
  };
  out.bytes(kPixel, sizeof kPixel);
  return mcpgen::ReadStatus::kOk;
}

mcpgen::ReadStatus read_template_data(const ResourceArgs_template_data& args, mcpgen::ResourceWriter& out,
                                      mcpgen::Context&) {
  // {"id":"<id>","templateTest":true,"data":"Data for ID: <id>"}: the spec lets only letters,
  // digits, '_' and '-' into the id, so the text stays valid JSON.
  out.text("{\"id\":\"");
  out.text(args.id);
  out.text("\",\"templateTest\":true,\"data\":\"Data for ID: ");
  out.text(args.id);
  out.text("\"}");
  return mcpgen::ReadStatus::kOk;
}

mcpgen::ReadStatus read_watched(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.text("Watched resource content.");
  return mcpgen::ReadStatus::kOk;
}

}  // namespace resources
