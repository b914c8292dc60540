mod context_api;
