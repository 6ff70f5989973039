// Typesets the formulas of the docs with the KaTeX copy beside this file (no network needed).
// pymdownx.arithmatex (generic mode) wraps each formula in an element of class "arithmatex",
// holding \( ... \) inline or \[ ... \] on its own line; KaTeX's auto-render turns each into
// typeset math. With mkdocs-material's instant loading a page is swapped in without a reload,
// so the rendering is tied to its document$ observable when there is one, else to the first load.
(function () {
  "use strict";

  function render(root) {
    if (typeof renderMathInElement === "undefined") {
      return;
    }
    var maths = (root || document).querySelectorAll(".arithmatex");
    for (var i = 0; i < maths.length; i++) {
      if (maths[i].querySelector(".katex")) {
        continue;
      }
      renderMathInElement(maths[i], {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
        throwOnError: false,
      });
    }
  }

  if (typeof document$ !== "undefined" && document$.subscribe) {
    document$.subscribe(function () {
      render(document);
    });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () {
      render(document);
    });
  } else {
    render(document);
  }
})();
