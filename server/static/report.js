// The report page's only script: "Copia come BBCode" copies the BBCode of the audit (the textarea beside it).
(function () {
  "use strict";
  const button = document.getElementById("copy-bbcode");
  const source = document.getElementById("bbcode");
  const status = document.getElementById("copy-bbcode-status");
  if (!button || !source) return;
  button.hidden = false; // without this script the text stays there to select by hand
  function said(text) {
    if (status) status.textContent = text;
  }
  // The clipboard API needs a secure context (https, localhost); elsewhere the old copy of a selection.
  function copyBySelection() {
    const box = document.getElementById("bbcode-box");
    if (box) box.open = true;
    source.focus();
    source.select();
    try {
      return document.execCommand("copy");
    } catch (e) {
      return false;
    }
  }
  button.addEventListener("click", function () {
    const done = function () { said("BBCode copiato: incollalo nel post."); };
    const fallback = function () {
      if (copyBySelection()) done();
      else said("Copia non riuscita: il testo è selezionato, copialo con Ctrl+C.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.value).then(done, fallback);
    } else {
      fallback();
    }
  });
})();
