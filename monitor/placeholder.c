int sc_monitor_placeholder;
