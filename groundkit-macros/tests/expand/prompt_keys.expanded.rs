/// Write a card.
pub async fn greeting_card(
    ctx: &Ctx,
    arguments: CardArguments,
) -> Result<Vec<Message>, Error> {
    ctx.card(arguments)
}
#[doc(hidden)]
#[::my_framework::gk::__private::linkme::distributed_slice(
    ::my_framework::gk::__private::PROMPTS
)]
#[linkme(crate = ::my_framework::gk::__private::linkme)]
static __GROUNDKIT_PROMPT_GREETING_CARD: ::my_framework::gk::__private::PromptSpec = {
    #[allow(dead_code)]
    fn __groundkit_checks(arguments: &CardArguments) {
        ::my_framework::gk::__private::assert_context::<Ctx>();
        ::my_framework::gk::__private::assert_request::<CardArguments>();
        ::my_framework::gk::__private::assert_prompt_return::<
            Result<Vec<Message>, Error>,
        >();
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::my_framework::gk::__private::ErasedContext,
        arguments: ::my_framework::gk::__private::serde_json::Value,
        call: ::my_framework::gk::__private::RequestContext,
    ) -> ::my_framework::gk::__private::BoxFuture<
        'a,
        ::my_framework::gk::__private::core::result::Result<
            ::my_framework::gk::__private::std::vec::Vec<
                ::my_framework::gk::__private::Message,
            >,
            ::my_framework::gk::__private::Error,
        >,
    > {
        ::my_framework::gk::__private::std::boxed::Box::pin(async move {
            let context = ::my_framework::gk::__private::downcast_context::<
                Ctx,
            >(context)?;
            let arguments = ::my_framework::gk::__private::parse_arguments::<
                CardArguments,
            >(arguments)?;
            ::my_framework::gk::__private::PromptReturn::into_messages(
                greeting_card(context, arguments).await,
            )
        })
    }
    ::my_framework::gk::__private::PromptSpec::new::<
        ::my_framework::gk::__private::ReadOnly,
    >(::my_framework::gk::__private::PromptParts {
        name: "card",
        title: ::my_framework::gk::__private::core::option::Option::Some("A card"),
        icon: ::my_framework::gk::__private::core::option::Option::Some(
            "https://example.com/card.png",
        ),
        summary: "Write a card.",
        description: "Write a card.",
        route: ::my_framework::gk::__private::RestRoute {
            method: ::my_framework::gk::__private::HttpMethod::Post,
            path: "/prompts/card",
            params: &[],
        },
        context: ::my_framework::gk::__private::type_id::<Ctx>,
        context_name: ::my_framework::gk::__private::core::any::type_name::<Ctx>,
        arguments_schema: ::my_framework::gk::__private::input_schema::<CardArguments>,
        completers: &[],
        handler: __groundkit_handler,
    })
};
