// weft studio: live updates and actions, in plain JavaScript. Every page
// reads without it; with it, runs are followed as they go.
"use strict";
(function () {
  const prefix = document.body.dataset.prefix || "/studio/";
  window.weftStudio = { prefix: prefix, api: function (path) { return prefix + "api/" + path.replace(/^\//, ""); } };
})();
