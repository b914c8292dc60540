#!/usr/bin/env node
// The `zidane` command of the npm package: the platform package's `zidane` binary, run
// by the shared launcher.
"use strict";

require("./launch.js").launch("zidane");
