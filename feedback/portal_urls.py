from django.urls import path

from feedback import views, webhooks

urlpatterns = [
    path("feedback", views.feedback_page, name="feedback"),
    path("feedback/upload", views.feedback_upload, name="feedback-upload"),
    path("feedback/mailgun-key", views.feedback_mailgun_key, name="feedback-mailgun-key"),
    path("feedback/rotate", views.feedback_rotate, name="feedback-rotate"),
    path("webhooks/feedback/<str:provider>/<str:token>", webhooks.feedback_webhook, name="feedback-webhook"),
]
