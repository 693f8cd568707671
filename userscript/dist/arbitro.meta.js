// ==UserScript==
// @name           Arbitro
// @name:it        Arbitro — arbitro dei combattimenti GdR
// @namespace      arbitro-gdr
// @version        0.1.0
// @description    Verdicts, state and 'your turn' hints of play-by-forum fights, on the forum page
// @description:it Verdetti, stato dei personaggi e "Tocca a…" dei combattimenti GdR, sulla pagina del forum
// @author         Arbitro
// @license        MIT
// @match          *://*.forumfree.it/*
// @match          *://*.forumcommunity.net/*
// @match          *://*.blogfree.net/*
// @match          *://*.forumattivo.com/*
// @match          *://*.forumattivo.it/*
// @match          *://*.forumotion.com/*
// @match          *://*.forumotion.net/*
// @match          *://*.forumotion.org/*
// @match          *://*.forumactif.com/*
// @match          *://*.forumactif.org/*
// @match          *://*.forumactif.net/*
// @match          *://*.forumactif.fr/*
// @match          *://*.foroactivo.com/*
// @match          *://*.forumieren.com/*
// @match          *://*/viewtopic.php*
// @match          *://*/*/viewtopic.php*
// @grant          GM.xmlHttpRequest
// @grant          GM.getValue
// @grant          GM.setValue
// @grant          GM.registerMenuCommand
// @grant          GM.setClipboard
// @grant          GM_xmlhttpRequest
// @grant          GM_getValue
// @grant          GM_setValue
// @grant          GM_registerMenuCommand
// @grant          GM_setClipboard
// @connect        __ARBITRO_SERVICE_HOST__
// @run-at         document-idle
// @noframes
// @updateURL      __ARBITRO_SERVICE_URL__/userscript/arbitro.meta.js
// @downloadURL    __ARBITRO_SERVICE_URL__/userscript/arbitro.user.js
// @supportURL     __ARBITRO_SERVICE_URL__/
// ==/UserScript==
