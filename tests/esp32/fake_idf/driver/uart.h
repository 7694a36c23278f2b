#pragma once
#include <stddef.h>
#include <stdint.h>

#include "freertos/FreeRTOS.h"

typedef int esp_err_t;
#define ESP_OK 0
typedef int uart_port_t;
#define UART_NUM_0 0
typedef enum { UART_DATA_8_BITS = 3 } uart_word_length_t;
typedef enum { UART_PARITY_DISABLE = 0 } uart_parity_t;
typedef enum { UART_STOP_BITS_1 = 1 } uart_stop_bits_t;
typedef enum { UART_HW_FLOWCTRL_DISABLE = 0 } uart_hw_flowcontrol_t;
typedef enum { UART_SCLK_DEFAULT = 0 } uart_sclk_t;
typedef struct {
  int baud_rate;
  uart_word_length_t data_bits;
  uart_parity_t parity;
  uart_stop_bits_t stop_bits;
  uart_hw_flowcontrol_t flow_ctrl;
  uart_sclk_t source_clk;
} uart_config_t;

esp_err_t uart_driver_install(uart_port_t port, int rx_size, int tx_size, int queue_size, QueueHandle_t* queue,
                              int flags);
esp_err_t uart_param_config(uart_port_t port, const uart_config_t* cfg);
int uart_read_bytes(uart_port_t port, void* buf, uint32_t len, TickType_t wait);
int uart_write_bytes(uart_port_t port, const void* src, size_t len);
esp_err_t uart_get_buffered_data_len(uart_port_t port, size_t* len);
