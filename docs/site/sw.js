// The page's service worker: it keeps a copy of every file of the page, so
// that the simulator works offline once it has loaded. Each request goes to
// the network first (a rebuilt page is seen at once) and falls back to the
// copy when the network does not answer.
'use strict';

const CACHE = 'headroom-sim';
const FILES = ['./', 'index.html', 'style.css', 'app.js', 'wasm_exec.js', 'sim.wasm'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(request, copy)));
        }
        return response;
      })
      .catch(() => caches.match(request, { ignoreSearch: true }).then((cached) => cached || Response.error())),
  );
});
