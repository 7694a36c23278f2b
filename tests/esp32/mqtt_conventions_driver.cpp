// Host driver for firmware_template/core/mcpgen/mqtt_conventions.h (the MQTT
// transport's topic names, Response Topic rule, goodbye and hello): each command line
// on stdin gives one answer line on stdout, read by test_esp32_mqtt.py.
//   topic PREFIX DEVICE LEAF     -> the topic, or "-" when it cannot be built
//   level TEXT / prefix TEXT     -> 1 or 0 (valid device id / prefix)
//   response TEXT                -> 1 or 0 (answered there)
//   goodbye SESSION JSON...      -> 1 or 0 ("-" as SESSION: none yet)
//   hello CLIENT TOKEN CAP       -> the core-shaped hello {"type":"hello"} extended, or "-"
#include <stdio.h>
#include <string.h>

#include "mcpgen/mqtt_conventions.h"

int main() {
  char line[4096];
  while (fgets(line, sizeof line, stdin) != nullptr) {
    line[strcspn(line, "\n")] = '\0';
    char* rest = strchr(line, ' ');
    if (rest == nullptr) continue;
    *rest++ = '\0';
    if (strcmp(line, "topic") == 0) {
      char prefix[1024], device[1024], leaf[16];
      if (sscanf(rest, "%1023s %1023s %15s", prefix, device, leaf) != 3) return 2;
      char out[mcpgen_mqtt::kMaxTopic + 1];
      puts(mcpgen_mqtt::build_topic(out, sizeof out, prefix, device, leaf) > 0 ? out : "-");
    } else if (strcmp(line, "level") == 0) {
      puts(mcpgen_mqtt::valid_topic_level(rest) ? "1" : "0");
    } else if (strcmp(line, "prefix") == 0) {
      puts(mcpgen_mqtt::valid_prefix(rest) ? "1" : "0");
    } else if (strcmp(line, "response") == 0) {
      puts(mcpgen_mqtt::usable_response_topic(rest, strlen(rest)) ? "1" : "0");
    } else if (strcmp(line, "goodbye") == 0) {
      char* json = strchr(rest, ' ');
      if (json == nullptr) return 2;
      *json++ = '\0';
      const char* session = strcmp(rest, "-") == 0 ? "" : rest;
      puts(mcpgen_mqtt::is_goodbye(json, strlen(json), session) ? "1" : "0");
    } else if (strcmp(line, "hello") == 0) {
      char client[256], token[256];
      size_t cap = 0;
      if (sscanf(rest, "%255s %255s %zu", client, token, &cap) != 3 || cap > 1024) return 2;
      char out[1024];
      const char* core = "{\"type\":\"hello\"}";
      size_t n = strlen(core);
      memcpy(out, core, n);
      size_t m = mcpgen_mqtt::extend_hello(out, n, cap, client, strcmp(token, "-") == 0 ? "" : token);
      if (m == 0) {
        puts("-");
      } else {
        fwrite(out, 1, m, stdout);
        putchar('\n');
      }
    } else {
      return 2;
    }
  }
  return 0;
}
