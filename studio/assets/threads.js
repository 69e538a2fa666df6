// The threads list, live: every 2 s, while the tab is visible, the list
// (its table, count and pages) is fetched again with the page's filters
// (GET threads?...&partial=1) and put in place, so that a new thread or
// a changed status shows without a reload. Plain JavaScript, no library.
(function () {
  'use strict';
  var list = document.getElementById('thread-list');
  var note = document.getElementById('threads-live');
  if (!list || !note || !note.dataset.url || !window.fetch) {
    return;
  }
  var url = note.dataset.url;
  var every = 2000;
  var inFlight = false;
  var last = list.innerHTML;

  function stamp() {
    return new Date().toLocaleTimeString();
  }

  // put replaces the list's HTML, keeping the keyboard focus on the same
  // link when it is still there.
  function put(html) {
    var focused = document.activeElement;
    var href = focused && list.contains(focused) ? focused.getAttribute('href') : null;
    list.innerHTML = html;
    if (href) {
      var again = list.querySelector('a[href="' + CSS.escape(href) + '"]');
      if (again) {
        again.focus();
      }
    }
  }

  function refresh() {
    if (inFlight || document.visibilityState !== 'visible') {
      return;
    }
    inFlight = true;
    fetch(url, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (resp) {
        return resp.text().then(function (text) {
          if (!resp.ok) {
            throw new Error(resp.status + ' ' + text.trim().slice(0, 300));
          }
          return text;
        });
      })
      .then(function (html) {
        if (html !== last) {
          put(html);
          last = html;
        }
        note.classList.remove('error');
        note.textContent = 'Live: updated every 2 s while this tab is visible (last at ' + stamp() + ').';
      })
      .catch(function (err) {
        note.classList.add('error');
        note.textContent = 'The live update failed at ' + stamp() + ': ' + err.message + ' (it tries again in 2 s).';
      })
      .finally(function () {
        inFlight = false;
      });
  }

  note.textContent = 'Live: updated every 2 s while this tab is visible.';
  setInterval(refresh, every);
  document.addEventListener('visibilitychange', refresh);
})();
