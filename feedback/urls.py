from django.urls import path

from feedback.apis import FeedbackApi

urlpatterns = [
    path("feedback", FeedbackApi.as_view(), name="api-feedback"),
]
