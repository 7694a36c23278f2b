// Test harness for the generated xiaozhi glue: defines the McpServer members the glue
// calls (constructor, destructor, AddTool, AddUserOnlyTool) against the REAL stock
// main/mcp_server.h, registers the spec's tools with mcpgen_register_tools, and drives
// the registered McpTool objects like the stock McpServer::DoToolCall does: PropertyList
// filled from the JSON arguments (matching type only; defaults otherwise), then the
// stock inline McpTool::Call. Replies are framed like the stock ReplyResult/ReplyError.
//
// stdin: one JSON request per line; stdout: one JSON line per request.
//   {"op":"list"}
//     -> {"tools":[{"user_only":bool,"entry":"<McpTool::to_json()>"},...]}
//   {"op":"call","name":"<tool>","arguments":{...}}
//     -> {"reply":"<the JSON-RPC message the stock server would send>",
//         "notifications":["<JSON-RPC notification>",...]}
//   {"op":"register_again"}  (mcpgen_register_tools a second time: duplicates are dropped)
//     -> {"count":<tools registered>}
//
// With the argument --stock-boot the harness starts like the stock firmware does: the
// board's InitializeTools (mcpgen_register_tools) runs first, then Application's
// McpServer::AddCommonTools() and AddUserOnlyTools(), defined below the way the stock
// main/mcp_server.cc behaves: AddCommonTools puts its tools in FRONT of those already
// registered (it sets them aside, adds its own, and appends them again; its AddTool
// calls therefore do not see them), AddUserOnlyTools appends and skips a name already
// registered. The stand-in stock tools answer "stock:<name>".
//
// With --board=<parts> (after --stock-boot; parts: a comma list of backlight, camera,
// display, possibly empty) the board has only that hardware: the stock tools that need it
// are registered only then (as main/mcp_server.cc does), and the glue is told the board
// with mcpgen_register_tools(server, mcpgen_stock_board(board)).
#include <stdio.h>

#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "mcp_server.h"
// The stock firmware's main component builds with HAVE_LVGL on boards with an LVGL display.
#ifndef HAVE_LVGL
#define HAVE_LVGL 1
#endif
#include "mcpgen_xiaozhi_tools.h"

namespace {

// A stand-in of the stock Board: only what mcpgen_stock_board and AddCommonTools ask.
struct FakeBoard {
  int part = 0;  // what the getters return a pointer to
  bool backlight = true;
  bool camera = true;
  bool display = true;
  void* GetBacklight() { return backlight ? &part : nullptr; }
  void* GetCamera() { return camera ? &part : nullptr; }
  void* GetDisplay() { return display ? &part : nullptr; }
};

FakeBoard g_board;

std::vector<McpTool*> g_tools;  // what McpServer::tools_ holds, visible to the driver
std::vector<std::string> g_notifications;

}  // namespace

McpServer::McpServer() {}

McpServer::~McpServer() {
  for (McpTool* tool : tools_) delete tool;
  tools_.clear();
  g_tools.clear();
}

void McpServer::AddTool(McpTool* tool) {
  for (const McpTool* t : tools_) {
    if (t->name() == tool->name()) {  // like the stock server: the first tool of a name stays
      delete tool;
      return;
    }
  }
  tools_.push_back(tool);
  g_tools = tools_;
}

namespace {

std::function<ReturnValue(const PropertyList&)> stock_tool(const std::string& name) {
  return [name](const PropertyList&) -> ReturnValue { return std::string("stock:" + name); };
}

}  // namespace

void McpServer::AddCommonTools() {
  std::vector<McpTool*> registered = std::move(tools_);
  tools_.clear();
  AddTool("self.get_device_status", "stock", PropertyList(), stock_tool("self.get_device_status"));
  AddTool("self.audio_speaker.set_volume", "stock",
          PropertyList(std::vector<Property>{Property("volume", kPropertyTypeInteger, 0, 100)}),
          stock_tool("self.audio_speaker.set_volume"));
  if (g_board.GetBacklight() != nullptr) {
    AddTool("self.screen.set_brightness", "stock",
            PropertyList(std::vector<Property>{Property("brightness", kPropertyTypeInteger, 0, 100)}),
            stock_tool("self.screen.set_brightness"));
  }
  if (g_board.GetDisplay() != nullptr) {
    AddTool("self.screen.set_theme", "stock",
            PropertyList(std::vector<Property>{Property("theme", kPropertyTypeString)}),
            stock_tool("self.screen.set_theme"));
  }
  if (g_board.GetCamera() != nullptr) {
    AddTool("self.camera.take_photo", "stock",
            PropertyList(std::vector<Property>{Property("question", kPropertyTypeString)}),
            stock_tool("self.camera.take_photo"));
  }
  tools_.insert(tools_.end(), registered.begin(), registered.end());
  g_tools = tools_;
}

void McpServer::AddUserOnlyTools() {
  const char* names[] = {"self.get_system_info",        "self.reboot",          "self.upgrade_firmware",
                         "self.screen.get_info",        "self.screen.snapshot", "self.screen.preview_image",
                         "self.assets.set_download_url"};
  for (const char* name : names) {
    if (std::string(name).rfind("self.screen.", 0) == 0 && g_board.GetDisplay() == nullptr) continue;
    AddUserOnlyTool(name, "stock", PropertyList(), stock_tool(name));
  }
}

void McpServer::AddTool(const std::string& name, const std::string& description, const PropertyList& properties,
                        std::function<ReturnValue(const PropertyList&)> callback) {
  AddTool(new McpTool(name, description, properties, callback));
}

void McpServer::AddUserOnlyTool(const std::string& name, const std::string& description, const PropertyList& properties,
                                std::function<ReturnValue(const PropertyList&)> callback) {
  McpTool* tool = new McpTool(name, description, properties, callback);
  tool->set_user_only(true);
  AddTool(tool);
}

namespace {

std::string reply_result(const std::string& result) {
  return "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + result + "}";
}

// Pasted without escaping, like the stock ReplyError.
std::string reply_error(const std::string& message) {
  return "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"" + message + "\"}}";
}

std::string call(const std::string& name, const cJSON* args) {
  McpTool* tool = nullptr;
  for (McpTool* t : g_tools) {
    if (t->name() == name) {
      tool = t;
      break;
    }
  }
  if (tool == nullptr) return reply_error("Unknown tool: " + name);
  PropertyList arguments = tool->properties();
  try {
    for (Property& argument : arguments) {
      bool found = false;
      const cJSON* value = cJSON_IsObject(args) ? cJSON_GetObjectItem(args, argument.name().c_str()) : nullptr;
      if (argument.type() == kPropertyTypeBoolean && cJSON_IsBool(value)) {
        argument.set_value<bool>(cJSON_IsTrue(value) != 0);
        found = true;
      } else if (argument.type() == kPropertyTypeInteger && cJSON_IsNumber(value)) {
        argument.set_value<int>(value->valueint);
        found = true;
      } else if (argument.type() == kPropertyTypeString && cJSON_IsString(value)) {
        argument.set_value<std::string>(value->valuestring);
        found = true;
      }
      if (!argument.has_default_value() && !found) return reply_error("Missing valid argument: " + argument.name());
    }
  } catch (const std::exception& e) {
    return reply_error(e.what());
  }
  try {
    return reply_result(tool->Call(arguments));
  } catch (const std::exception& e) {
    return reply_error(e.what());
  }
}

void print_and_free(cJSON* out) {
  char* text = cJSON_PrintUnformatted(out);
  std::cout << text << std::endl;
  cJSON_free(text);
  cJSON_Delete(out);
}

}  // namespace

int main(int argc, char** argv) {
  McpServer& server = McpServer::GetInstance();
  std::string board = argc > 2 ? argv[2] : "";
  if (board.rfind("--board=", 0) == 0) {
    std::string parts = "," + board.substr(8) + ",";
    g_board.backlight = parts.find(",backlight,") != std::string::npos;
    g_board.camera = parts.find(",camera,") != std::string::npos;
    g_board.display = parts.find(",display,") != std::string::npos;
    mcpgen_register_tools(server, mcpgen_stock_board(g_board));  // as the board's InitializeTools
  } else {
    mcpgen_register_tools(server);
  }
  if (argc > 1 && std::string(argv[1]) == "--stock-boot") {
    server.AddCommonTools();
    server.AddUserOnlyTools();
  }
  mcpgen::xiaozhi::set_notification_sink([](const std::string& m) { g_notifications.push_back(m); });

  std::string line;
  while (std::getline(std::cin, line)) {
    cJSON* request = cJSON_Parse(line.c_str());
    const char* op = cJSON_GetStringValue(cJSON_GetObjectItem(request, "op"));
    cJSON* out = cJSON_CreateObject();
    if (op != nullptr && std::string(op) == "list") {
      cJSON* tools = cJSON_AddArrayToObject(out, "tools");
      for (const McpTool* t : g_tools) {
        cJSON* item = cJSON_CreateObject();
        cJSON_AddBoolToObject(item, "user_only", t->user_only());
        cJSON_AddStringToObject(item, "entry", t->to_json().c_str());
        cJSON_AddItemToArray(tools, item);
      }
    } else if (op != nullptr && std::string(op) == "call") {
      const char* name = cJSON_GetStringValue(cJSON_GetObjectItem(request, "name"));
      g_notifications.clear();
      std::string reply = call(name != nullptr ? name : "", cJSON_GetObjectItem(request, "arguments"));
      cJSON_AddStringToObject(out, "reply", reply.c_str());
      cJSON* notes = cJSON_AddArrayToObject(out, "notifications");
      for (const std::string& n : g_notifications) cJSON_AddItemToArray(notes, cJSON_CreateString(n.c_str()));
    } else if (op != nullptr && std::string(op) == "register_again") {
      mcpgen_register_tools(server);
      cJSON_AddNumberToObject(out, "count", static_cast<double>(g_tools.size()));
    } else {
      cJSON_AddStringToObject(out, "bad_request", line.c_str());
    }
    cJSON_Delete(request);
    print_and_free(out);
  }
  return 0;
}
