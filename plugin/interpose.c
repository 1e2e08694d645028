/* placeholder, replaced next */ int sc_placeholder;
