"""A receipt as a PDF file a finance team can file (docs/portal.md, "Billing"): the same facts as
the receipt page (billing/receipts.py), laid out with fpdf2 (pure Python, no system libraries).

fpdf2's built-in Helvetica holds Windows-1252 characters only (Western European letters, €, dashes,
curly quotes), the encoding fpdf2 declares for it; a billing name or address in another script
prints its other characters as "?" here (rather than failing), and in full on the page."""

from __future__ import annotations

from typing import Any

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from billing.models import Payment
from billing.receipts import receipt_context

LINE = 6  # mm between lines


def latin(text: str) -> str:
    return text.encode("cp1252", "replace").decode("cp1252")


def receipt_pdf(payment: Payment) -> bytes:
    """A succeeded payment's receipt: number, date, seller, who it is made out to, what was bought, amount."""
    facts = receipt_context(payment)
    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = "cp1252"  # what fpdf2 declares its core fonts in (WinAnsiEncoding); latin-1 lacks — ’ €
    pdf.set_title(latin(f"Receipt {payment.number}"))
    pdf.set_author(latin(facts["seller"]))
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 20)
    pdf.cell(0, 12, "Receipt", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    _facts(pdf, payment)
    _parties(pdf, facts)
    _lines(pdf, payment)
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(
        0, LINE, latin(f"Questions about this payment: {facts['contact_email']}"), new_x=XPos.LMARGIN, new_y=YPos.NEXT
    )
    return bytes(pdf.output())


def _facts(pdf: FPDF, payment: Payment) -> None:
    paid_by = "Card (automatic top-up)" if payment.off_session else "Card"
    for label, value in (
        ("Receipt number", payment.number),
        ("Date paid", f"{payment.created_at:%-d %B %Y}"),
        ("Paid by", paid_by),
    ):
        pdf.set_font("Helvetica", "B", 10)
        pdf.cell(40, LINE, label)
        pdf.set_font("Helvetica", "", 10)
        pdf.cell(0, LINE, latin(value), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(LINE)


def _parties(pdf: FPDF, facts: dict[str, Any]) -> None:
    details, payment = facts["details"], facts["payment"]
    billed_to = [details.name, *details.address.splitlines()]
    if details.tax_id:
        billed_to.append(f"Tax number: {details.tax_id}")
    billed_to.append(payment.account.email)
    for heading, lines in (("From", [facts["seller"], facts["contact_email"]]), ("Billed to", billed_to)):
        pdf.set_font("Helvetica", "B", 11)
        pdf.cell(0, LINE, heading, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Helvetica", "", 10)
        for line in filter(None, (line.strip() for line in lines)):
            pdf.multi_cell(0, LINE, latin(line), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(LINE / 2)
    pdf.ln(LINE / 2)


def _lines(pdf: FPDF, payment: Payment) -> None:
    amount_width = 40
    pdf.set_font("Helvetica", "B", 10)
    pdf.cell(pdf.epw - amount_width, LINE + 2, "Description", border="B")
    pdf.cell(amount_width, LINE + 2, "Amount", border="B", align="R", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(pdf.epw - amount_width, LINE + 2, latin(payment.description))
    pdf.cell(amount_width, LINE + 2, payment.amount, align="R", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", "B", 10)
    pdf.cell(pdf.epw - amount_width, LINE + 2, f"Total paid ({payment.currency.upper()})", border="T")
    pdf.cell(amount_width, LINE + 2, payment.amount, border="T", align="R", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(LINE)
