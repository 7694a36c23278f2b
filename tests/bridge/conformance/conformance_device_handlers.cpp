// Handlers of the conformance fixture (conformance_device.yaml): the answers the official
// MCP conformance suite's server scenarios expect, from a generated device.
#include <stdio.h>
#include <string.h>

#include "mcp_tools.h"

namespace {

// A 1x1 PNG (one green pixel), base64-encoded.
const char kPixelPng[] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

// A WAV file of four silent samples (8 kHz, 8-bit mono PCM: silence is 0x80).
const uint8_t kSilenceWav[] = {
    'R',  'I',  'F', 'F', 40,   0,    0, 0, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ', 16, 0, 0, 0, 1,    0,    1,    0,
    0x40, 0x1f, 0,   0,   0x40, 0x1f, 0, 0, 1,   0,   8,   0,   'd', 'a', 't', 'a', 4,  0, 0, 0, 0x80, 0x80, 0x80, 0x80,
};

const char* yes_no(bool b) { return b ? "true" : "false"; }

}  // namespace

namespace tools {

mcpgen::Result test_simple_text(const TestSimpleTextArgs&, mcpgen::Context&) {
  return mcpgen::Result::Text("This is a simple text response for testing.");
}

mcpgen::Result test_image_content(const TestImageContentArgs&, mcpgen::Context&) {
  return mcpgen::Result::Image("image/png", kPixelPng);
}

mcpgen::Result test_audio_content(const TestAudioContentArgs&, mcpgen::Context& ctx) {
  return mcpgen::Result::Audio(ctx, "audio/wav", kSilenceWav, sizeof kSilenceWav);
}

mcpgen::Result test_embedded_resource(const TestEmbeddedResourceArgs&, mcpgen::Context& ctx) {
  return mcpgen::Result::Resource(ctx, "test://static-text");
}

mcpgen::Result test_multiple_content_types(const TestMultipleContentTypesArgs&, mcpgen::Context& ctx) {
  ctx.items().text("Multiple content types test:").image("image/png", kPixelPng).resource("test://static-text");
  return mcpgen::Result::Items(ctx);
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

mcpgen::Result test_tool_with_progress(const TestToolWithProgressArgs&, mcpgen::Context& ctx) {
  ctx.progress(0, 100);
  ctx.progress(50, 100);
  ctx.progress(100, 100);
  return mcpgen::Result::Text("Tool with progress executed successfully");
}

mcpgen::Result test_sampling(const TestSamplingArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "no sampling from a device; prompt was: %s", args.prompt);
  return mcpgen::Result::Text(ctx.scratch());
}

// The bridge asked the person (elicitation/create) before the call reached the device: a
// declined or cancelled request never gets here, so the action is always accept.
mcpgen::Result test_elicitation(const TestElicitationArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "User provided: username=%s, email=%s (message: %s)", args.username,
           args.email, args.message);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result test_elicitation_sep1034_defaults(const TestElicitationSep1034DefaultsArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(),
           "Elicitation completed: action=accept, content={name=%s, age=%lld, score=%g, status=%s, verified=%s}",
           args.name, static_cast<long long>(args.age), args.score, args.status, yes_no(args.verified));
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result test_elicitation_sep1330_enums(const TestElicitationSep1330EnumsArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "Elicitation completed: action=accept, content={untitledSingle=%s}",
           args.untitledSingle);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result json_schema_2020_12_tool(const JsonSchema202012ToolArgs& args, mcpgen::Context& ctx) {
  snprintf(ctx.scratch(), ctx.scratch_size(), "name: %s, address: %s, %s", args.name, args.address.street,
           args.address.city);
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
