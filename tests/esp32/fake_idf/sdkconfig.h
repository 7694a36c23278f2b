// Test configuration: the serial transport on UART0, which is also the console's port.
#pragma once
#define CONFIG_MCPGEN_TRANSPORT_SERIAL 1
#define CONFIG_MCPGEN_SERIAL_UART0 1
#define CONFIG_MCPGEN_SERIAL_BAUD 115200
#define CONFIG_ESP_CONSOLE_UART 1
#define CONFIG_ESP_CONSOLE_UART_NUM 0
#define CONFIG_MCPGEN_RX_SLOTS 2
